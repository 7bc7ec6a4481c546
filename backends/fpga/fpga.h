/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The FPGA family (DRA driver fpga.dralet.dev), kind "fpga":
 *   xrt          AMD/Xilinx Alveo (XRT shells): one device per card, named
 *                after the user PF; the management PF is claimed, yields none
 *   dfl          Intel DFL cards: one device per port (AFU slot); the FME is
 *                management
 *   fpga-region  any other function with fpga_manager/fpga_region class
 *                devices, and Xilinx/Altera functions of FPGA-like classes
 * plus the helpers they share: ID checks, fpga_manager health, FpgaConfig.
 * Their prepare changes nothing on the card, so they have no unprepare (the
 * agent's default: nothing to undo).
 */
#ifndef DRALET_BACKENDS_FPGA_H
#define DRALET_BACKENDS_FPGA_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

#define FPGA_DRIVER "fpga.dralet.dev"
#define FPGA_API_VERSION "fpga.dralet.dev/v1alpha1"

/* xrt and dfl match device ids and their own sysfs markers (30); the generic
 * backend scores a function with FPGA class devices just above a
 * vendor+class match (25), and Xilinx/Altera functions of FPGA-like classes
 * as one (20). All beat the accel backend (10) for class 0x12 cards. */
#define FPGA_VENDOR_SCORE DRALET_SCORE_DEVICE
#define FPGA_REGION_SCORE (DRALET_SCORE_VENDOR_CLASS + 5)
#define FPGA_RAW_SCORE DRALET_SCORE_VENDOR_CLASS

extern const struct dralet_backend backend_xrt;
extern const struct dralet_backend backend_dfl;
extern const struct dralet_backend backend_fpga_region;

/* ---- IDs (UUIDs, interface/AFU IDs): hex digits with optional dashes ---- */

/* Copies @id lower-case without dashes or a "0x" prefix into @out (33+
 * bytes). Returns false when it is not 1-32 hex digits. */
bool fpga_id_normalize(const char *id, char *out, size_t size);
/* Whether @a and @b are well-formed IDs and the same one. */
bool fpga_id_equal(const char *a, const char *b);
/* All 'f': what a crashed FPGA firmware reports (Intel's plugin). */
bool fpga_id_all_f(const char *id);
/* All '0': nothing loaded (XRT's xclbinuuid without an xclbin). */
bool fpga_id_all_zero(const char *id);
/* Sets attribute @name to @id when it is a well-formed ID; a malformed one
 * is a warning naming @dev and @what. */
void fpga_set_id_attr(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		      const char *name, const char *id);

/* ---- health ---- */

/*
 * Health of the fpga_managers of @func now (class/fpga_manager/<name>/state
 * and status re-read; the scan's facts as fallback): a status line or an
 * error/"power off" state is UNHEALTHY; "operating" and "unknown" (what the
 * DFL FME manager always reports) are HEALTHY; a state in the middle of
 * programming is UNKNOWN. HEALTHY when @func has no manager.
 */
int fpga_managers_health(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func);
/* The worse of two enum dralet_health values (UNHEALTHY > UNKNOWN > HEALTHY). */
int fpga_health_worst(int a, int b);

/* The backends' options (backends.<name>.options): bitstreamDir, the node's
 * bitstream store (bitstream.h; default FPGA_STORE_DEFAULT_DIR). */
extern const struct dralet_option fpga_options[];
/* The store directory of @ctx's backend. */
const char *fpga_store_dir(const struct dralet_backend_ctx *ctx);

/* ---- FpgaConfig (fpga_config.c) ---- */

enum fpga_on_unprepare {
	FPGA_ON_UNPREPARE_KEEP,		/* leave the image loaded */
	FPGA_ON_UNPREPARE_RESET,	/* clear the region (fpga_manager overlays only; refused elsewhere) */
	FPGA_ON_UNPREPARE_GOLDEN,	/* load the image that was there before */
};

struct fpga_config {
	char require_shell[128];
	char require_interface_id[40];	/* normalised */
	char require_afu_id[40];	/* normalised */
	bool management_access;
	bool has_bitstream;
	char bitstream_name[64];	/* "" unless given */
	char bitstream_sha256[65];	/* "" unless given */
	int on_unprepare;		/* enum fpga_on_unprepare */
};

/* Parses and validates @text (NULL: empty). -EINVAL with @err. */
int fpga_config_parse(const char *text, struct fpga_config *ret, char *err, size_t errlen);

int fpga_validate_config(struct dralet_backend_ctx *ctx, const char *config);
/* The FpgaConfig keys only the cluster admin may set: managementAccess. */
extern const struct dralet_config_key fpga_config_admin_keys[];

/* What a card offers, to check a config against at prepare. */
struct fpga_identity {
	const char *what;		/* "Alveo 0000:3b:00.1", for messages */
	const char *shell;		/* NULL: the card has no shell name */
	const char *interface_id;
	const char *afu_id;		/* DFL AFU ID, or XRT's loaded xclbin UUID */
	bool has_management;		/* a management node exists to hand out */
};

/* Parses @config and checks it against @id: -EINVAL with a message in the
 * context when a requirement does not hold. */
int fpga_config_check(struct dralet_backend_ctx *ctx, const char *config,
		      const struct fpga_identity *id, struct fpga_config *ret);

/* ---- a claim's bitstream (fpga_bitstream.c) ---- */

struct fpga_loaded;

/*
 * Loads the bitstream @cfg names (cfg->has_bitstream) from the store of
 * @ctx's backend and checks it against the region @id describes: of kind
 * @want (GBS for DFL, xclbin for XRT, raw for fpga_manager), built for the
 * region's interface (id->interface_id; an xclbin naming none: for the
 * shell id->shell), bringing the AFU/xclbin a requireAfuID names. On
 * refusal returns -errno (-ENOENT: missing, -EBADMSG: checksum,
 * -EINVAL: incompatible, -ENODEV: the region has no interface ID to check)
 * with the reason in the context's error; nothing was written to the device.
 * Release *ret with fpga_store_unload.
 */
int fpga_bitstream_for(struct dralet_backend_ctx *ctx, const struct fpga_config *cfg,
		       const struct fpga_identity *id, int want, struct fpga_loaded *ret);

/*
 * Parses the claim's config into @cfg (an error in the context when it does
 * not parse) and, when it names a bitstream, loads and checks it
 * (fpga_bitstream_for; an adminAccess request is refused, -EPERM).
 * *ret_loaded: the region has that image loaded now (id->afu_id is its
 * accelerator ID), so nothing needs to be written; id->afu_id then points
 * into @img. @img is untouched without a bitstream.
 */
int fpga_claim_bitstream(struct dralet_backend_ctx *ctx, const struct dralet_prepare_req *req,
			 struct fpga_identity *id, struct fpga_config *cfg, int want,
			 struct fpga_loaded *img, bool *ret_loaded);

/* Sets attribute loadedBitstream (the image's first name in the index) or,
 * for an unnamed image, loadedBitstreamSHA256, when the store holds a @kind
 * image bringing @accelerator_id for @interface_id (headers only: no
 * checksum at discovery). Nothing when the store has none. */
void fpga_set_loaded_attr(struct dralet_backend_ctx *ctx, struct dralet_device *dev, int kind,
			  const char *accelerator_id, const char *interface_id);

/* ---- loading an image into a region (fpga_load.c) ---- */

/*
 * How long programming may take (docs/fpga.md, "Programming time"): the
 * kubelet gives each NodePrepareResources call 45 s (defaultClientCallTimeout,
 * shared/reference/kubelet-contract.md); programming gets at most
 * FPGA_PROGRAM_BUDGET_S of it, the rest is for reading and hashing the image,
 * the undo state's and checkpoint's fsyncs, the CDI spec and the call's other
 * claims. The time is estimated from the image's size at the option
 * programBytesPerSecond, by default FPGA_PROGRAM_DEFAULT_RATE: 8 MiB/s, four
 * times slower than the slowest DFL PR data path measured upstream (32-bit PR:
 * ~3 s for a 100 MB image; "fpga: dfl: fme: support 512bit data width PR",
 * Wu Hao, 2019), so 240 MiB fit.
 */
#define FPGA_KUBELET_PREPARE_DEADLINE_S 45
#define FPGA_PROGRAM_BUDGET_S 30
#define FPGA_PROGRAM_DEFAULT_RATE (8ull << 20)

/* The programming rate the backend assumes (option programBytesPerSecond,
 * bytes per second); -EINVAL with the reason in the context for a value
 * that is no positive number. */
int fpga_program_rate(struct dralet_backend_ctx *ctx, unsigned long long *ret);

/* A region as the mechanism sees it. */
struct fpga_region {
	const char *what;		/* "DFL port dfl-port.0 of 0000:3b:00.0" */
	int kind;			/* enum fpga_image_kind it takes */
	const char *interface_id;	/* the region's, to find a previous image by */
	/* The accelerator ID the region shows now (into @buf), or NULL. */
	const char *(*loaded)(struct dralet_backend_ctx *ctx, const void *self, char *buf,
			      size_t size);
	/* Writes @img into the region; -errno with the reason in the context. */
	int (*write)(struct dralet_backend_ctx *ctx, const void *self,
		     const struct fpga_loaded *img);
	/* Clears the region (onUnprepare: reset); NULL when the mechanism
	 * cannot. Idempotent; -errno with the reason in the context. */
	int (*clear)(struct dralet_backend_ctx *ctx, const void *self);
	const void *self;
};

/*
 * Records the undo state (the accelerator @previous the region showed, the
 * image's, its sha256, the onUnprepare policy) durably, then, unless the
 * region has the image already (@loaded), writes it and verifies that the
 * region shows its accelerator (-EIO otherwise). A failed write or check
 * puts the region back (fpga_restore) before returning, as a failing
 * prepare must; the error says whether that worked. onUnprepare reset is
 * refused (-EINVAL) unless the region can be cleared (rg->clear); so is, before
 * anything is written (-ETIME), an image whose estimated programming time
 * (fpga_program_rate) exceeds FPGA_PROGRAM_BUDGET_S. A write's duration is
 * told to the agent (dralet_ctx_info), which logs it.
 */
int fpga_load_for_claim(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			const struct dralet_prepare_req *req, const struct fpga_config *cfg,
			const struct fpga_loaded *img, bool loaded, const char *previous);

/*
 * A region left in an unknown state: a load was interrupted (a crash, found
 * by the claims engine's recovery at the next start) or failed, and putting
 * its previous image back failed too. The backend keeps one per region (in
 * its device's private data, guarded by the agent's device lock like every
 * prepare, unprepare and health call of the device) from that failure until
 * the region shows a known accelerator again (the previous one or the
 * claim's: an image loaded by hand, or an unprepare of the claim that put it
 * back); meanwhile the health op reports the region Unhealthy. With the
 * backend option stateDir the mark is also kept on disk
 * (<stateDir>/<device>.stranded: "<previous> <accelerator> <sha256>"), so a
 * rediscovery or a restart, which make the devices anew, find it again
 * (fpga_stranded_load); without it, it lives in memory only (docs/fpga.md 4).
 */
struct fpga_stranded {
	bool set;
	char previous[40], accelerator[40], sha256[65];
	char key[64];			/* the device's name: its file under stateDir */
};

/* At probe: names @s after @device and takes a mark kept under stateDir. */
void fpga_stranded_load(struct dralet_backend_ctx *ctx, struct fpga_stranded *s,
			const char *device);

/* After fpga_restore (or a failed fpga_load_for_claim) returned @r with
 * @undo: clears @s on success; on failure sets it when the region shows
 * neither the claim's accelerator nor the previous one. Nothing without
 * bitstream undo state. Kept on disk as well with stateDir. */
void fpga_stranded_note(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			const struct dralet_undo *undo, int r, struct fpga_stranded *s);

/* DRALET_HEALTH_UNHEALTHY, with the reason in the context, while @s is set
 * and the region shows neither accelerator; else DRALET_HEALTH_HEALTHY, and
 * a region showing one of them clears @s (and its file). */
int fpga_stranded_health(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			 struct fpga_stranded *s);

/*
 * Unprepare from the undo state alone: keep leaves the claim's image when
 * the region shows it; reset clears the region (rg->clear); golden, or a region showing something else (caught
 * mid-load by a crash or a failed write), gets the previous accelerator's
 * image back from the store. Idempotent; 0 without bitstream undo state.
 */
int fpga_restore(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
		 const struct dralet_undo *undo);

/* XRT (xrt_load.c): loads the xclbin @img on the Alveo whose user PF is
 * @user_bdf through XRT's C API (option xrtLibrary). */
int fpga_xrt_load(struct dralet_backend_ctx *ctx, const char *user_bdf,
		  const struct fpga_loaded *img);

#endif
