/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet backend SDK: what a backend is.
 *
 * A backend is a const table of operations plus a PCI match table, in the
 * style of rdma-core providers and pciutils access methods. In-tree backends
 * are listed in agent/core/builtin.c; vendors build a
 * shared object against this SDK (pkg-config dralet-backend) that exports
 * its tables with DRALET_BACKEND_EXPORT, and the agent loads it from
 * --backend-dir. Every operation but probe is optional: when a backend is
 * registered the agent replaces each NULL operation by its default, once
 * (the defaults are listed at each operation below), so nothing in the agent
 * tests an operation for NULL.
 *
 * Who owns a PCI function (the rule): every enabled backend scores every
 * function; the highest positive score wins; on a tie the backend listed
 * first wins, where backends loaded from --backend-dir come before the
 * in-tree ones. A function nobody scores is not published. A backend's score
 * comes from its match table first (see dralet_pci_id): the best entry that
 * matches (first on a tie) gives the score; a function no entry matches is
 * not the backend's. The filter operation, when present, then sees that
 * entry and its score and keeps, adjusts or refuses it. Probe is told the
 * same entry.
 *
 * Threading: filter, probe and remove run on the agent's discovery thread;
 * prepare, unprepare and health may run on worker threads, one call per
 * device at a time.
 */
#ifndef DRALET_BACKEND_H
#define DRALET_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/device.h>
#include <dralet/pci.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct in pci.h/backend.h changes layout or an SDK
 * function changes meaning. The agent refuses backends built for another. */
#define DRALET_BACKEND_ABI 5

#define DRALET_PCI_ANY 0xffffffffu

/* Scores of table matches: a device id beats a vendor+class which beats a
 * class alone. A filter that adjusts a score uses the same scale. */
#define DRALET_SCORE_CLASS 10
#define DRALET_SCORE_VENDOR_CLASS 20
#define DRALET_SCORE_DEVICE 30

/*
 * One match table entry. A function matches when vendor and device equal
 * (or are DRALET_PCI_ANY) and (class_code & class_mask) == class. The score
 * is DRALET_SCORE_DEVICE for a device id, DRALET_SCORE_VENDOR_CLASS for a
 * vendor (with or without a class mask), DRALET_SCORE_CLASS for a class
 * alone. Tables end with an entry whose vendor, device and class_mask are
 * all 0.
 */
struct dralet_pci_id {
	uint32_t vendor;
	uint32_t device;
	uint32_t class_code;
	uint32_t class_mask;
};

#define DRALET_PCI_DEVICE(v, d) { (v), (d), 0, 0 }
#define DRALET_PCI_VENDOR_CLASS(v, c, m) { (v), DRALET_PCI_ANY, (c), (m) }
#define DRALET_PCI_CLASS(c, m) { DRALET_PCI_ANY, DRALET_PCI_ANY, (c), (m) }
/* Every function (score DRALET_SCORE_CLASS): for a backend whose filter
 * decides from facts beyond the IDs (an RDMA device, the PF of a VF). */
#define DRALET_PCI_ANY_FUNCTION DRALET_PCI_CLASS(0, 0)

/*
 * An opaque config key that reaches beyond the device handed out: the VLAN
 * a VF joins, its MAC address, trust or spoof checking, an FPGA's
 * management interface. The agent takes such a key from a DeviceClass
 * config (source FromClass: the cluster admin's) and refuses it in a
 * claim's own config (FromClaim: anyone who may create claims in a
 * namespace) unless the request has adminAccess or a class config lists
 * the key in the agent's "claimSettable" parameter:
 *
 *   {"apiVersion": ..., "kind": "VfConfig", "vlan": 100,
 *    "claimSettable": ["mac"]}     // claims may pick their MAC, not their VLAN
 *
 * "claimSettable" is taken out of the parameters before the backend sees
 * them, and is itself refused in a claim's config. The refusal fails the
 * prepare naming the key and @why. Backends list their keys in
 * admin_config_keys; the agent enforces the rule for every backend.
 */
struct dralet_config_key {
	const char *name;	/* top-level key of the parameters ("vlan") */
	const char *why;	/* what a tenant could do with it ("puts the VF on any VLAN") */
};

/*
 * A key of the backend's "options" map in the agent's configuration
 * (backends.<name>.options). The agent refuses keys a backend does not
 * declare, naming the key and the declared ones, so a typo never passes
 * silently.
 */
struct dralet_option {
	const char *name;	/* "nvmlLibrary" */
	unsigned flags;		/* DRALET_OPTION_* */
};

/* The value is the path of a file the backend loads or runs (a library, a
 * tool): the agent refuses it unless the file and every directory above it
 * can be changed only by root or the agent's own user. */
#define DRALET_OPTION_TRUSTED_FILE 1u

/* Opaque types owned by the agent. */
struct dralet_backend_ctx;
struct dralet_edits;
struct dralet_undo;

/* The claim a prepare or unprepare is for. */
struct dralet_claim_ref {
	const char *uid;
	const char *namespace_;
	const char *name;
};

/* One device of a claim to prepare. */
struct dralet_prepare_req {
	struct dralet_claim_ref claim;
	const char *request;	/* request name, "req" or "req/subrequest" */
	bool admin_access;	/* monitoring access: do not take the device exclusively */
	const char *config;	/* merged opaque parameters (JSON object text) or NULL */
	struct dralet_edits *edits;	/* container edits to fill (prepare.h) */
	struct dralet_undo *undo;	/* state to keep for unprepare (prepare.h) */
	/* A shared device (sharing.h): the allocation's shareID and what it
	 * consumes of each capacity, as the scheduler recorded it; NULL / 0 for
	 * an exclusive allocation. Added in ABI 5, after ABI 4's fields. */
	const char *share_id;
	const struct dralet_capacity *consumed;
	size_t n_consumed;
};

struct dralet_backend {
	uint32_t abi;			/* DRALET_BACKEND_ABI */
	const char *name;		/* unique, "nvidia" */
	const char *family;		/* "gpu", "fpga", "net", "sriov", "accel": CDI class */
	const char *default_driver;	/* DRA driver name, "gpu.dralet.dev" */
	const struct dralet_pci_id *ids;	/* the match table; required */

	/* Optional. Called for a function that entry @id of the match table
	 * matched, with @score, that entry's table score. Returns the score to
	 * claim @func with (> 0; @score keeps the table's, another value on the
	 * DRALET_SCORE_* scale ranks it against other backends), 0 to leave it,
	 * or -errno (logged; the function is left). Default: returns @score. */
	int (*filter)(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const struct dralet_pci_id *id, int score);

	/* Optional. Called once before a discovery; *ret_state is handed to every
	 * later call through dralet_ctx_state() and released with fini. It may
	 * create the backend's devices without a PCI function
	 * (dralet_device_new with @func NULL: an SoC's FPGA manager).
	 * Default: no state, returns 0. */
	int (*init)(struct dralet_backend_ctx *ctx, void **ret_state);
	void (*fini)(void *state);	/* default: nothing */

	/* Required. Creates the devices of a claimed function with
	 * dralet_device_new(); zero devices is fine (a management function, for
	 * instance). @id is the match table entry the score came from (never
	 * NULL). */
	int (*probe)(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		     const struct dralet_pci_id *id);

	/* Optional. Releases what probe attached beyond the private data.
	 * Default: nothing. */
	void (*remove)(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

	/* Checks the opaque parameters (JSON object text) a claim or class gives
	 * this backend. Unknown fields are errors; the message goes to
	 * dralet_ctx_error(). Default: refuses every config (-EOPNOTSUPP,
	 * "backend <name> takes no opaque config"). */
	int (*validate_config)(struct dralet_backend_ctx *ctx, const char *config);

	/* Makes @dev usable by a container of the claim and fills the edits.
	 * Default: -EOPNOTSUPP ("the backend cannot prepare"). */
	int (*prepare)(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       struct dralet_prepare_req *req);

	/* Undoes prepare with the state prepare kept. Must be idempotent.
	 * Default: returns 0 (a prepare that changed nothing leaves nothing to
	 * undo). */
	int (*unprepare)(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 const struct dralet_claim_ref *claim, const struct dralet_undo *undo);

	/* Returns the current enum dralet_health of @dev, or -errno (the device
	 * is then reported Unknown). Called every health interval while the
	 * agent runs, on a worker thread; must not call dralet_device_set_health
	 * (the agent applies the answer). Say why it is not healthy with
	 * dralet_ctx_error() ("port 1 is DOWN"): the kubelet shows it in the
	 * pod's status (1.36+). Default: the device's health as it is (the
	 * probe's stays). */
	int (*health)(struct dralet_backend_ctx *ctx, struct dralet_device *dev);

	/* Optional. The opaque config keys only the cluster admin may set (struct
	 * dralet_config_key), ending with an entry whose name is NULL. */
	const struct dralet_config_key *admin_config_keys;

	/* The keys of the backend's "options" map (struct dralet_option), ending
	 * with an entry whose name is NULL; NULL: it takes no options. */
	const struct dralet_option *options;
};

/*
 * Exports the backends of a shared object:
 *   DRALET_BACKEND_EXPORT(&my_backend);
 * defines dralet_backend_export_v1(), which the agent looks up with dlsym.
 */
#define DRALET_BACKEND_EXPORT(...)                                                  \
	const struct dralet_backend *const *dralet_backend_export_v1(void);         \
	const struct dralet_backend *const *dralet_backend_export_v1(void)          \
	{                                                                          \
		static const struct dralet_backend *const list[] = { __VA_ARGS__, 0 }; \
		return list;                                                       \
	}

/* ---- what the agent offers a backend (valid only during the call) ---- */

/* The DRA driver name this backend's devices are published under. */
const char *dralet_ctx_driver(const struct dralet_backend_ctx *ctx);
/* The backend's state from init, or NULL. */
void *dralet_ctx_state(const struct dralet_backend_ctx *ctx);
/* The driver's state directory under `dralet run` (<plugins dir>/<driver>,
 * where its checkpoint lives; it may not exist before the first discovery
 * is over), for marks that must outlive a restart; NULL under the other
 * commands (discover, slices, ...), which must not write any. */
const char *dralet_ctx_state_dir(const struct dralet_backend_ctx *ctx);
/* A string option from the backend's "options" map in the config (one the
 * backend declares in its options table), or NULL. */
const char *dralet_ctx_option(const struct dralet_backend_ctx *ctx, const char *key);

/*
 * 0 when only root or the agent's user can change the file @path and every
 * directory above it (docs/architecture.md, "The agent"): the rule for code
 * the agent loads or runs. Options declared DRALET_OPTION_TRUSTED_FILE are
 * checked at start; a backend calls this for such a file it found itself.
 * -EPERM, or -errno when a part cannot be looked at, with why in @err.
 * Exported from the agent since 0.1.0 (ABI 5).
 */
int dralet_trusted_file(const char *path, char *err, size_t errlen);

/* Looks up another PCI function of the node by address ("0000:3b:00.1"). */
const struct dralet_pci_func *dralet_ctx_find_pci(const struct dralet_backend_ctx *ctx,
					       const char *address);

enum dralet_root {
	DRALET_ROOT_SYS,
	DRALET_ROOT_DEV,
	DRALET_ROOT_PROC,
};

/*
 * Reads a small text file below a root ("driver/nvidia/version" below the
 * proc root) into @buf, without the trailing newline. Returns the length, or
 * -errno (-ENOENT when it does not exist, -EFBIG when it does not fit).
 */
int dralet_read_file(const struct dralet_backend_ctx *ctx, enum dralet_root root,
		     const char *relpath, char *buf, size_t size);
/* Same, for a file in the sysfs directory of @func ("mem_info_vram_total"). */
int dralet_read_pci_file(const struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			 const char *name, char *buf, size_t size);
/* Builds the absolute path of @relpath below a root into @buf. */
int dralet_root_path(const struct dralet_backend_ctx *ctx, enum dralet_root root,
		     const char *relpath, char *buf, size_t size);
/* The longest device node path dralet_devnode() writes, with its NUL. */
#define DRALET_DEVNODE_PATH_MAX 256
/* Resolves a device node: stats "<dev root>/<path below /dev>" and, when it is
 * not a character device (simulated trees), falls back to @major/@minor. The
 * path ("/dev/nvidia0") is written to @path, the caller's buffer of
 * DRALET_DEVNODE_PATH_MAX bytes, and ret_node->path points to it (no devnode
 * owns its path: pci.h); ret_node->path is NULL when the node does not exist.
 * 0, -ENAMETOOLONG, or the -errno of stat. */
int dralet_devnode(const struct dralet_backend_ctx *ctx, const char *dev_path,
		   unsigned major, unsigned minor, char *path, struct dralet_devnode *ret_node);
/* The major number of a character driver in <proc>/devices ("nvidia-frontend"). */
int dralet_char_major(const struct dralet_backend_ctx *ctx, const char *driver_name);

/* Records a warning for the agent to log once, with backend and context. */
void dralet_ctx_warn(struct dralet_backend_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Tells the agent what a prepare or unprepare did to the hardware that an
 * operator wants in the log (a region programmed, and how long it took); the
 * agent logs it at info level with the backend's name. Not for discovery or
 * health: those run every few seconds. */
void dralet_ctx_info(struct dralet_backend_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Tells the agent that the prepare or unprepare running now changed what
 * discovery publishes about the node (an FPGA region now holds another
 * image): once no claims call is in flight, the agent discovers the node
 * again and publishes what changed. Ignored outside prepare and unprepare. */
void dralet_ctx_node_changed(struct dralet_backend_ctx *ctx);
/* Sets the error message of the current operation (prepare, validate ...). */
void dralet_ctx_error(struct dralet_backend_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Names the cause of the Unhealthy answer the health operation gives: a taint
 * key (a label key, "dralet.dev/xid"; the string must live as long as the
 * backend is loaded) the device's slices then carry instead of the generic
 * dralet.dev/unhealthy (docs/health.md). Ignored outside health, for any
 * other answer, and for a key that is no label key. */
void dralet_ctx_health_cause(struct dralet_backend_ctx *ctx, const char *taint_key);

#ifdef __cplusplus
}
#endif
#endif /* DRALET_BACKEND_H */
