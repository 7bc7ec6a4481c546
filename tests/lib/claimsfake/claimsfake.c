/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test backend for the claims integration and crash tests
 * (tests/integration/test_claims*.py, test_crash*.py): built by make
 * test-libs into $(BUILD)/tests/lib/claimsfake.so and loaded with
 * --backend-dir.
 *
 * It claims the made-up PCI function 1234:d7a0 and models "hardware state"
 * as files: preparing device D for claim U writes <stateDir>/D containing U
 * (unless adminAccess); unpreparing removes it. A second exclusive prepare of
 * a device whose file names another claim fails, so a test can see from the
 * state directory exactly which devices are prepared, and double
 * preparation is caught. Opaque config (strict: unknown fields are errors):
 *   {"mode": "<string>", "sleepMs": <int>, "failPrepare": <bool>,
 *    "gateFile": "<path>", "apiVersion": ..., "kind": ...}
 * gateFile lets a test show causes without a clock: a prepare creates
 * <path>.arrived.<device> and then waits until <path> exists (a test opens
 * the gate by creating it; after 120 s the prepare fails instead), so a test
 * sees which prepares run at the same time, and whether one ran at all.
 * A function's sysfs file "fake_uuid" becomes the device's uuid attribute
 * (a test changes it to simulate another device in the same slot), its
 * "fake_ifname" the ifName attribute of a network device (whose claims get
 * device status: docs/claims.md). A
 * function with a sysfs file "fake_shared" is a shared device
 * (allowMultipleAllocations, capacity memory 16Gi): each share is prepared
 * on its own, its state file named <stateDir>/D@<shareID>.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include <dralet/backend.h>
#include <dralet/device.h>
#include <dralet/prepare.h>
#include <dralet/sharing.h>

static const struct dralet_pci_id fake_ids[] = {
	DRALET_PCI_DEVICE(0x1234, 0xd7a0),
	{ 0, 0, 0, 0 },
};

static int fake_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		      const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	char uuid[128];
	int r = dralet_device_new(ctx, func, "fake", NULL, &dev);

	(void)id;
	if (r < 0)
		return r;
	if (dralet_read_pci_file(ctx, func, "fake_uuid", uuid, sizeof(uuid)) > 0)
		dralet_device_set_string(dev, "uuid", uuid);
	dralet_device_set_string(dev, "model", "claims-test");
	if (dralet_read_pci_file(ctx, func, "fake_ifname", uuid, sizeof(uuid)) > 0)
		dralet_device_set_string(dev, "ifName", uuid);
	if (dralet_read_pci_file(ctx, func, "fake_shared", uuid, sizeof(uuid)) > 0) {
		dralet_device_set_capacity(dev, "memory", "16Gi");
		dralet_device_allow_multiple(dev);
	}
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return 0;
}

static int parse_config(struct dralet_backend_ctx *ctx, const char *config, const char **mode,
			int *sleep_ms, int *fail, const char **gate, struct json_object **ret)
{
	struct json_object *o = json_tokener_parse(config);

	*gate = NULL;
	*mode = "default";
	*sleep_ms = 0;
	*fail = 0;
	if (!o || !json_object_is_type(o, json_type_object)) {
		dralet_ctx_error(ctx, "config is not a JSON object");
		json_object_put(o);
		return -EINVAL;
	}
	json_object_object_foreach(o, key, val) {
		if (!strcmp(key, "mode") && json_object_is_type(val, json_type_string)) {
			*mode = json_object_get_string(val);
		} else if (!strcmp(key, "sleepMs") && json_object_is_type(val, json_type_int)) {
			*sleep_ms = json_object_get_int(val);
		} else if (!strcmp(key, "failPrepare") && json_object_is_type(val, json_type_boolean)) {
			*fail = json_object_get_boolean(val);
		} else if (!strcmp(key, "gateFile") && json_object_is_type(val, json_type_string)) {
			*gate = json_object_get_string(val);
		} else if (!strcmp(key, "apiVersion") || !strcmp(key, "kind")) {
			continue;
		} else {
			dralet_ctx_error(ctx, "unknown field \"%s\" (or wrong type)", key);
			json_object_put(o);
			return -EINVAL;
		}
	}
	*ret = o;
	return 0;
}

static int fake_validate(struct dralet_backend_ctx *ctx, const char *config)
{
	struct json_object *o = NULL;
	const char *mode, *gate;
	int sleep_ms, fail, r = parse_config(ctx, config, &mode, &sleep_ms, &fail, &gate, &o);

	json_object_put(o);
	return r;
}

static int state_path(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		      const char *share_id, char *buf, size_t size)
{
	const char *dir = dralet_ctx_option(ctx, "stateDir");

	if (!dir)
		return -ENOENT;
	if (share_id)
		snprintf(buf, size, "%s/%s@%s", dir, dralet_device_name(dev), share_id);
	else
		snprintf(buf, size, "%s/%s", dir, dralet_device_name(dev));
	return 0;
}

/* Marks the arrival, then waits for the gate (see the header comment). */
static int wait_gate(struct dralet_backend_ctx *ctx, struct dralet_device *dev, const char *gate)
{
	char arrived[PATH_MAX];
	int fd;

	snprintf(arrived, sizeof(arrived), "%s.arrived.%s", gate, dralet_device_name(dev));
	fd = open(arrived, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 12000; i++) {
		if (access(gate, F_OK) == 0)
			return 0;
		usleep(10000);
	}
	dralet_ctx_error(ctx, "gate %s never opened", gate);
	return -ETIMEDOUT;
}

static int fake_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			struct dralet_prepare_req *req)
{
	struct json_object *o = NULL;
	const char *mode = "default", *gate = NULL;
	int sleep_ms = 0, fail = 0, r;
	char path[4096], held[256] = "", minor_env[32];
	struct dralet_devnode node;
	FILE *f;

	if (req->config &&
	    (r = parse_config(ctx, req->config, &mode, &sleep_ms, &fail, &gate, &o)) < 0)
		return r;
	if (sleep_ms > 0)
		usleep((useconds_t)sleep_ms * 1000);
	if (gate && (r = wait_gate(ctx, dev, gate)) < 0) {
		json_object_put(o);
		return r;
	}
	if (fail) {
		dralet_ctx_error(ctx, "failing as configured (failPrepare)");
		json_object_put(o);
		return -EIO;
	}
	if (!req->admin_access && state_path(ctx, dev, req->share_id, path, sizeof(path)) == 0) {
		f = fopen(path, "r");
		if (f) {
			if (!fgets(held, sizeof(held), f))
				held[0] = '\0';
			fclose(f);
			if (held[0] && strcmp(held, req->claim.uid)) {
				dralet_ctx_error(ctx, "device busy: hardware already prepared for %s", held);
				json_object_put(o);
				return -EBUSY;
			}
		}
		/* the contract: record how to undo it before changing anything */
		if (dralet_undo_set(req->undo, "stateFile", path) < 0) {
			dralet_ctx_error(ctx, "cannot record the undo state");
			json_object_put(o);
			return -EIO;
		}
		f = fopen(path, "w");
		if (!f) {
			dralet_ctx_error(ctx, "cannot write %s", path);
			json_object_put(o);
			return -EIO;
		}
		fputs(req->claim.uid, f);
		fclose(f);
	}
	node.path = "/dev/fake";
	node.major = 511;
	node.minor = (unsigned)dralet_device_pci(dev)->dev;
	snprintf(minor_env, sizeof(minor_env), "%u", node.minor);
	dralet_edits_add_node(req->edits, &node, "rw");
	dralet_edits_add_env(req->edits, "FAKE_DEVICE", dralet_device_name(dev));
	dralet_edits_add_env(req->edits, "FAKE_MODE", mode);
	dralet_edits_add_env(req->edits, "FAKE_MINOR", minor_env);
	json_object_put(o);
	return 0;
}

static int fake_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	const char *file = dralet_undo_get(undo, "stateFile");
	char path[4096], held[256] = "";
	FILE *f;

	if (!file) {
		/* no undo state (a crash before it was kept): remove ours only */
		if (state_path(ctx, dev, NULL, path, sizeof(path)) < 0)
			return 0;
		file = path;
		f = fopen(file, "r");
		if (!f)
			return 0;
		if (!fgets(held, sizeof(held), f))
			held[0] = '\0';
		fclose(f);
		if (strcmp(held, claim->uid))
			return 0;
	}
	if (unlink(file) < 0 && errno != ENOENT) {
		dralet_ctx_error(ctx, "cannot remove %s", file);
		return -errno;
	}
	return 0;
}

static const struct dralet_option fake_options[] = { { "stateDir", 0 }, { NULL, 0 } };

static const struct dralet_backend claimsfake = {
	.abi = DRALET_BACKEND_ABI,
	.name = "claimsfake",
	.family = "accel",
	.default_driver = "claims.test.dralet.dev",
	.ids = fake_ids,
	.probe = fake_probe,
	.validate_config = fake_validate,
	.prepare = fake_prepare,
	.unprepare = fake_unprepare,
	.options = fake_options,
};

DRALET_BACKEND_EXPORT(&claimsfake)
