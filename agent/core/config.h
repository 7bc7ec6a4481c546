/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's YAML configuration (--config FILE). Every key is checked; an
 * unknown key is an error naming it, so typos never pass silently. Without a
 * file every in-tree backend is enabled under its default driver name.
 *
 *   backends:                     # per backend, by name
 *     nvidia:
 *       enabled: true             # default true
 *       driver: gpu.dralet.dev    # DRA driver name (default: the backend's)
 *       options:                  # backend-specific strings, the keys the backend
 *                                 # declares (config_check_options)
 *         nvmlLibrary: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1
 *   publishUnsafeDevices: false   # also publish the default-route NIC and
 *                                 # controllers holding mounted filesystems
 *   pciIDs: /usr/share/misc/pci.ids   # name database (default: libpci's)
 *   featureGates:                 # alpha resource.k8s.io fields to publish (default off;
 *     DRADeviceTaints: true       # the cluster must enable the same gates)
 *     DRAPartitionableDevices: true  # default: on where the server has it on (1.36 on)
 *   kubernetesVersion: "1.34"     # the server the slices are for when the agent cannot
 *                                 # ask it (the file store); decides the layout of
 *                                 # partitionable devices (docs/publishing.md)
 *   healthCheckIntervalSeconds: 10    # device health checks while running (1-20;
 *                                 # docs/health.md); also how often the kubelet
 *                                 # gets the health list again
 *   sriov:                        # VF provisioning policies
 *     policies: [...]             # agent/core/sriov_policy_config.h, docs/sriov.md
 *   simulatedBoard: /usr/share/dralet/boards/hgx-h100.yaml
 *                                 # run on this board's simulated node instead of
 *                                 # the real one (what --board does; docs/boards.md)
 */
#ifndef DRALET_CONFIG_H
#define DRALET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

struct sriov_policies;
struct dralet_option;

/* healthCheckIntervalSeconds: the kubelet marks a device's health Unknown
 * when no list mentioned it for 30 s, and the list goes out every round. */
#define CONFIG_HEALTH_INTERVAL_DEFAULT_S 10
#define CONFIG_HEALTH_INTERVAL_MAX_S 20

struct config_backend {
	const char *name;
	bool enabled;
	const char *driver;		/* NULL: the backend's default */
	struct json_object *options;	/* object of strings, or NULL */
};

struct config {
	struct config_backend *backends;
	size_t n_backends;
	bool publish_unsafe;
	const char *pci_ids;		/* NULL: libpci default */
	const char *simulated_board;	/* NULL: the real node */
	unsigned health_interval_s;	/* CONFIG_HEALTH_INTERVAL_DEFAULT_S unless set */
	struct sriov_policies *sriov;	/* never NULL after config_load */
	struct json_object *root;	/* owns every string above */
	/* dralet run: its plugins directory (borrowed), each driver's state
	 * directory below it (dralet_ctx_state_dir); NULL for the other commands */
	const char *state_root;
};

/* Loads @path (NULL: defaults), which must pass trusted_path_check (-EPERM
 * otherwise: root reads its settings from it). On error returns
 * -errno/-EINVAL with the file, the key and the problem in @err. */
int config_load(const char *path, struct config **ret_cfg, char *err, size_t errlen);
void config_free(struct config *cfg);

/* The settings of backend @name, or NULL when the file does not mention it
 * (enabled, default driver, no options). */
const struct config_backend *config_backend(const struct config *cfg, const char *name);

/*
 * Checks @b's options against the backend's declared ones (@known, may be
 * NULL: none) with the strict decoder (options_json.h), as the rest of the
 * file: an unknown key is -EINVAL with "backends.<name>.options: unknown
 * field "<key>" (known: ...)" in @err; a DRALET_OPTION_TRUSTED_FILE value
 * that is a path (has a '/') must pass trusted_path_check (its -errno,
 * "backends.<name>.options.<key>: refusing <path>: <why>"). -ENOMEM.
 */
int config_check_options(const struct config_backend *b, const struct dralet_option *known,
			 char *err, size_t errlen);

#endif
