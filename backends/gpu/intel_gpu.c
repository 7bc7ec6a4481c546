/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The intel-gpu backend: Intel display-class functions bound to i915 or xe
 * (integrated GPUs, Arc, Data Center GPU Flex and Max, and their SR-IOV
 * VFs), one device of kind "gpu" each, with the attributes Intel's DRA
 * driver publishes (driver, model, family, pciId, sriov, capacity memory and
 * millicores). Local memory: xe's tile<T>/physical_vram_size_bytes summed
 * over tiles; i915's drm/cardN/lmem_total_bytes where the (out-of-tree)
 * driver has it. Attribute reference: docs/attributes-gpu.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpu_backends.h"
#include "gpu.h"

#define MAX_TILES 8

/* An Intel GPU (intel_ids) driven by i915 or xe. */
static int intel_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	if (!f->driver || (strcmp(f->driver, "i915") && strcmp(f->driver, "xe")))
		return 0;
	return score;
}

/* Product families by PCI device id, as Intel's tools name them. */
static const char *family_of(uint16_t id)
{
	if (id >= 0x0bd0 && id <= 0x0bdf)
		return "Data Center GPU Max";
	if (id >= 0x56c0 && id <= 0x56cf)
		return "Data Center GPU Flex";
	if (id >= 0x5690 && id <= 0x56bf)
		return "Arc";
	if (id >= 0xe200 && id <= 0xe2ff)
		return "Arc B-Series";
	return NULL;
}

static uint64_t local_memory(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f)
{
	uint64_t total = 0, v;
	char name[96];

	if (!strcmp(f->driver, "xe")) {
		for (unsigned t = 0; t < MAX_TILES; t++) {
			snprintf(name, sizeof(name), "tile%u/physical_vram_size_bytes", t);
			if (gpu_read_pci_u64(ctx, f, name, &v)) {
				total += v;
				continue;
			}
			snprintf(name, sizeof(name), "tile%u/memory/physical_vram_size_bytes", t);
			if (gpu_read_pci_u64(ctx, f, name, &v))
				total += v;
		}
		return total;
	}
	for (size_t i = 0; i < f->n_drm; i++) {
		if (strncmp(f->drm[i].name, "card", 4))
			continue;
		snprintf(name, sizeof(name), "drm/%s/lmem_total_bytes", f->drm[i].name);
		if (gpu_read_pci_u64(ctx, f, name, &v))
			return v;
	}
	return 0;
}

static int intel_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		       const struct dralet_pci_id *entry)
{
	struct dralet_device *dev;
	const char *family = family_of(f->device_id);
	char id[8];
	uint64_t mem;
	int r;

	(void)entry;
	if ((r = dralet_device_new(ctx, f, "gpu", NULL, &dev)) < 0)
		return r;
	if (!gpu_info_attach(dev, GPU_TYPE_FULL))
		return -ENOMEM;
	gpu_set_common(dev, f->physfn ? "vf" : "gpu");
	dralet_device_set_string(dev, "driver", f->driver);
	snprintf(id, sizeof(id), "0x%04x", f->device_id);
	dralet_device_set_string(dev, "pciId", id);
	if (f->device_name)
		dralet_device_set_string(dev, "model", f->device_name);
	if (family)
		dralet_device_set_string(dev, "family", family);
	dralet_device_set_bool(dev, "sriov", f->sriov && f->sriov->total_vfs > 0);
	if (f->physfn)
		dralet_device_set_string(dev, "parentPciAddress", f->physfn->address);
	mem = local_memory(ctx, f);
	if (mem)
		dralet_device_set_capacity_bytes(dev, "memory", mem);
	dralet_device_set_capacity_int(dev, "millicores", 1000);
	gpu_set_defaults(dev);
	gpu_add_drm_nodes(ctx, dev, f);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	/* a VF is handed to VMs by the SR-IOV backends */
	return !f->physfn && vfio_form_enabled(ctx) ? gpu_vfio_form_add(ctx, f, dev) : 0;
}

static const struct dralet_option intel_options[] = {
	VFIO_FORM_OPTIONS,
	{ NULL, 0 },
};

static const struct dralet_pci_id intel_ids[] = {
	DRALET_PCI_VENDOR_CLASS(0x8086, 0x030000, 0xff0000),
	{ 0, 0, 0, 0 },
};

const struct dralet_backend gpu_intel_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "intel-gpu",
	.family = "gpu",
	.default_driver = GPU_DRIVER_DEFAULT,
	.ids = intel_ids,
	.filter = intel_filter,
	.probe = intel_probe,
	.validate_config = gpu_validate_config_no_sharing,
	.prepare = gpu_prepare_plain_or_vfio,
	.unprepare = gpu_unprepare_vfio,
	.health = gpu_health_pci,
	.options = intel_options,
};
