/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device metadata files (KEP-5304; docs/claims.md, "Device metadata"): for each
 * request of a prepared claim, a JSON file describing the devices the request got
 * (driver, pool, name, the published attributes, networkData for network devices),
 * bind-mounted read-only into the containers that use them, so programs (KubeVirt,
 * DPDK, MPI) find their devices without the API.
 *
 * Layout, as the upstream kubeletplugin helper writes it
 * (k8s.io/dynamic-resource-allocation v0.37.2 kubeletplugin/metadata.go,
 * api/metadata/types.go):
 *   host:      <state_dir>/dra-device-metadata/<namespace>_<claim>/<request>/metadata.json
 *   container: /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/
 *              <request>/<driver>-metadata.json, or .../resourceclaimtemplates/
 *              <podClaimName>/... for a claim made from a template (its annotation
 *              resource.kubernetes.io/pod-claim-name)
 * where <request> is the base request name ("req" of "req/sub"). The content is a
 * JSON stream: the DeviceMetadata object of metadata.resource.k8s.io/v1beta1, then
 * the same as v1alpha1 (readers take the first version they know).
 *
 * The path and rendering functions are pure; write/remove touch the state directory.
 * Errors are -errno: -EINVAL for a name that cannot be a path component,
 * -ENAMETOOLONG, -ENOMEM, and what the file system returns.
 */
#ifndef DRALET_CLAIMS_DEVICE_METADATA_H
#define DRALET_CLAIMS_DEVICE_METADATA_H

#include <stddef.h>
#include <json-c/json.h>
#include <dralet/device.h>

#include "agent/lib/atomic_file.h"

#define DEVICE_METADATA_CONTAINER_DIR "/var/run/kubernetes.io/dra-device-attributes"
#define DEVICE_METADATA_HOST_SUBDIR "dra-device-metadata"

/* The claim a metadata file is about (borrowed strings). */
struct device_metadata_claim {
	const char *driver;
	const char *namespace_;
	const char *name;
	const char *uid;
	const char *pod_claim_name;	/* NULL unless made from a template */
};

/* One device a request got (borrowed). */
struct device_metadata_device {
	const char *pool;
	const struct dralet_device *dev;
	const char *share_id;	/* a share of a shared device (claim status), or NULL */
};

/* networkData (the same in metadata files and claim device status) from the
 * attributes a network device publishes: interfaceName (ifName) and
 * hardwareAddress (mac); addresses are not known at prepare. NULL with *r 0
 * when the device has neither, NULL with *r -ENOMEM; else a new object. */
struct json_object *device_network_data(const struct dralet_device *dev, int *r);

/* The host file of @request (base name taken) below absolute @state_dir. */
int device_metadata_host_path(const char *state_dir, const struct device_metadata_claim *c,
			      const char *request, char *buf, size_t size);
/* Where the containers see it. */
int device_metadata_container_path(const struct device_metadata_claim *c, const char *request,
				   char *buf, size_t size);

/* The file's content for @request (the full name, "req/sub" too) and its devices: a
 * malloc'd, newline-separated JSON stream, or NULL on ENOMEM. */
char *device_metadata_render(const struct device_metadata_claim *c, const char *request,
			     const struct device_metadata_device *devices, size_t n_devices);

/* Writes @text as the file of @request atomically, as durable as @sync says
 * (atomic_file.h), creating the directories. */
int device_metadata_write(const char *state_dir, const struct device_metadata_claim *c,
			  const char *request, const char *text, enum atomic_file_sync sync);

/* Removes every metadata file of the claim and its directories; none is fine. */
int device_metadata_remove(const char *state_dir, const char *namespace_, const char *name);
/* The same, cheaper when the claim's requests are known (@requests, full or base
 * names, repeats allowed): their files and directories by name, no listing; what
 * else is left in the claim's directory is then removed as above. */
int device_metadata_remove_requests(const char *state_dir, const char *namespace_,
				    const char *name, const char *const *requests, size_t n);

/* Removes the directories of claims @keep does not know (after a restart: claims
 * unprepared or dropped while the agent was down). @keep gets "<namespace>_<claim>".
 * Returns the number removed or -errno. */
int device_metadata_remove_others(const char *state_dir,
				  int (*keep)(void *userdata, const char *ns_name),
				  void *userdata);

#endif
