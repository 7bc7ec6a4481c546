/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A vendor backend built out of tree against the installed SDK
 * (pkg-config dralet-backend) and loaded with --backend-dir. It claims the
 * QEMU "edu" teaching device (1234:11e8) unless it is bound to vfio-pci, and
 * publishes it with attributes of its own (one names the match table entry
 * probe was told) and one capacity, which proves the ABI end to end: the ops
 * table (every operation but filter and probe left to the agent's defaults),
 * the match table, the filter, and SDK calls back into the dralet binary.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/backend.h>
#include <dralet/device.h>

static const struct dralet_pci_id sample_ids[] = {
	DRALET_PCI_DEVICE(0x1234, 0x11e8),
	{ 0, 0, 0, 0 },
};

/* A device handed to a VM (vfio-pci) is not ours; the rest keep the table's
 * score. */
static int sample_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			 const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	return func->driver && !strcmp(func->driver, "vfio-pci") ? 0 : score;
}

static int sample_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			const struct dralet_pci_id *id)
{
	struct dralet_device *dev;
	char rev[8], entry[16];
	int r = dralet_device_new(ctx, func, "sample", NULL, &dev);

	if (r < 0)
		return r;
	snprintf(rev, sizeof(rev), "%u", func->revision);
	snprintf(entry, sizeof(entry), "%04x:%04x", id->vendor & 0xffff, id->device & 0xffff);
	dralet_device_set_string(dev, "vendorBackend", "sample");
	dralet_device_set_string(dev, "matchedEntry", entry);
	dralet_device_set_string(dev, "revision", rev);
	dralet_device_set_capacity_int(dev, "slots", 4);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return 0;
}

static const struct dralet_backend sample_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "sample",
	.family = "accel",
	.default_driver = "sample.example.com",
	.ids = sample_ids,
	.filter = sample_filter,
	.probe = sample_probe,
};

DRALET_BACKEND_EXPORT(&sample_backend)
