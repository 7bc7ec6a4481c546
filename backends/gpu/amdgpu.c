/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The amdgpu backend: AMD GPUs (vendor 0x1002, display or processing
 * accelerator class) bound to amdgpu. An unpartitioned GPU is one device of
 * kind "gpu"; an Instinct GPU split into compute partitions (DPX, QPX, CPX)
 * is published as its partitions instead (kind "partition"), each with its
 * own render node, the way AMD's DRA driver does. Facts come from the
 * function's sysfs files (product_name, unique_id, serial_number,
 * mem_info_vram_total, current_compute_partition, current_memory_partition),
 * /sys/module/amdgpu and the KFD topology (compute units, SIMDs, gfx target).
 * With option dynamicPartitions "true" a GPU in SPX is also published as
 * the partitions prepare can make (amdgpu_partition.c).
 * Attribute reference: docs/attributes-gpu.md.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu.h"
#include "amdgpu_partition.h"
#include "gpu_backends.h"

#define MAX_PARTITIONS 16

struct amd_state {
	struct amd_kfd kfd;
	int kfd_major;			/* -1 unknown */
	char driver_version[64];	/* /sys/module/amdgpu/version ("" none) */
	char driver_src_version[64];	/* /sys/module/amdgpu/srcversion */
	bool warned_kfd;
};

/* An AMD GPU (amd_ids) driven by amdgpu. */
static int amd_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	return f->driver && !strcmp(f->driver, "amdgpu") ? score : 0;
}

static void read_module_text(struct dralet_backend_ctx *ctx, const char *rel, char *buf,
			     size_t size)
{
	if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, size) < 0 || !gpu_text_ok(buf))
		buf[0] = '\0';
}

static int amd_init(struct dralet_backend_ctx *ctx, void **ret_state)
{
	struct amd_state *st = calloc(1, sizeof(*st));
	int r;

	if (!st)
		return -ENOMEM;
	if ((r = amd_kfd_read(ctx, &st->kfd)) < 0) {
		free(st);
		return r;
	}
	st->kfd_major = dralet_char_major(ctx, "kfd");
	read_module_text(ctx, "module/amdgpu/version", st->driver_version,
			 sizeof(st->driver_version));
	read_module_text(ctx, "module/amdgpu/srcversion", st->driver_src_version,
			 sizeof(st->driver_src_version));
	*ret_state = st;
	return 0;
}

static void amd_fini(void *state)
{
	struct amd_state *st = state;

	if (!st)
		return;
	amd_kfd_free(&st->kfd);
	free(st);
}

/* Facts of the whole GPU that its partitions share. */
struct amd_facts {
	char product[128], unique_id[64], serial[64], compute[16], memory_mode[16], profile[40];
	uint64_t vram;
};

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static void read_facts(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		       struct amd_facts *a)
{
	memset(a, 0, sizeof(*a));
	gpu_read_pci_text(ctx, f, "product_name", a->product, sizeof(a->product));
	gpu_read_pci_text(ctx, f, "unique_id", a->unique_id, sizeof(a->unique_id));
	gpu_read_pci_text(ctx, f, "serial_number", a->serial, sizeof(a->serial));
	gpu_read_pci_u64(ctx, f, "mem_info_vram_total", &a->vram);
	if (gpu_read_pci_text(ctx, f, "current_compute_partition", a->compute, sizeof(a->compute)))
		lower(a->compute);
	if (gpu_read_pci_text(ctx, f, "current_memory_partition", a->memory_mode,
			      sizeof(a->memory_mode)))
		lower(a->memory_mode);
	/* both must be plain words to make a profile ("cpx_nps1") */
	if (a->compute[0] && strspn(a->compute, "abcdefghijklmnopqrstuvwxyz0123456789") !=
				     strlen(a->compute))
		a->compute[0] = '\0';
	if (a->memory_mode[0] && strspn(a->memory_mode, "abcdefghijklmnopqrstuvwxyz0123456789") !=
					 strlen(a->memory_mode))
		a->memory_mode[0] = '\0';
	if (a->compute[0])
		snprintf(a->profile, sizeof(a->profile), "%s%s%s", a->compute,
			 a->memory_mode[0] ? "_" : "", a->memory_mode);
}

static const struct dralet_option amd_options[] = {
	/* "true": GPUs in SPX also publish the partitions prepare makes */
	{ "dynamicPartitions", 0 },
	{ "partitionStateDir", 0 },	/* where switched GPUs are marked (amdgpu_partition.c) */
	VFIO_FORM_OPTIONS,		/* gpu_vfio_form.c */
	{ NULL, 0 },
};

static void set_shared(struct amd_state *st, struct dralet_device *dev, const struct amd_facts *a,
		       const struct amd_kfd_node *node)
{
	if (a->product[0])
		dralet_device_set_string(dev, "productName", a->product);
	if (a->unique_id[0])
		dralet_device_set_string(dev, "uniqueID", a->unique_id);
	if (a->serial[0])
		dralet_device_set_string(dev, "serialNumber", a->serial);
	if (st->driver_version[0]) {
		dralet_device_set_version(dev, "driverVersion", st->driver_version);
		dralet_device_set_string(dev, "driverVersionFull", st->driver_version);
	}
	if (st->driver_src_version[0])
		dralet_device_set_string(dev, "driverSrcVersion", st->driver_src_version);
	if (a->profile[0])
		dralet_device_set_string(dev, "partitionProfile", a->profile);
	if (a->compute[0])
		dralet_device_set_string(dev, "computePartition", a->compute);
	if (a->memory_mode[0])
		dralet_device_set_string(dev, "memoryPartition", a->memory_mode);
	if (node && node->gfx_target_version) {
		char gfx[32];
		uint64_t v = node->gfx_target_version;
		snprintf(gfx, sizeof(gfx), "gfx%u%x%x", (unsigned)(v / 10000),
			 (unsigned)(v / 100 % 100), (unsigned)(v % 100));
		dralet_device_set_string(dev, "gfxVersion", gfx);
	}
	if (node && node->simd_count) {
		dralet_device_set_capacity_int(dev, "simdUnits", (int64_t)node->simd_count);
		if (node->simd_per_cu)
			dralet_device_set_capacity_int(dev, "computeUnits",
						       (int64_t)(node->simd_count / node->simd_per_cu));
	}
}

static void add_kfd(struct dralet_backend_ctx *ctx, struct amd_state *st, struct dralet_device *dev)
{
	if (gpu_add_node(ctx, dev, "kfd", st->kfd_major, 0, !st->warned_kfd) < 0)
		st->warned_kfd = true;
}

static int probe_partitions(struct dralet_backend_ctx *ctx, struct amd_state *st,
			    const struct dralet_pci_func *f, const struct amd_facts *a,
			    const struct amd_kfd_node *const *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct dralet_device *dev;
		struct gpu_info *info;
		char suffix[64], path[32];
		int r;

		snprintf(suffix, sizeof(suffix), "%s%s%zu", a->compute, a->compute[0] ? "-" : "", i);
		if ((r = dralet_device_new(ctx, f, "partition", suffix, &dev)) < 0)
			return r;
		if (!(info = gpu_info_attach(dev, GPU_TYPE_PARTITION)))
			return -ENOMEM;
		info->index = (int)i;
		snprintf(info->profile, sizeof(info->profile), "%s", a->profile);
		gpu_set_common(dev, "amdgpu-partition");
		dralet_device_set_int(dev, "partitionIndex", (int64_t)i);
		set_shared(st, dev, a, nodes[i]);
		if (nodes[i]->local_mem_size)
			dralet_device_set_capacity_bytes(dev, "memory", nodes[i]->local_mem_size);
		else if (a->vram && a->memory_mode[0] && !strcmp(a->memory_mode, "nps1"))
			dralet_device_set_capacity_bytes(dev, "memory", a->vram);
		if (nodes[i]->render_minor >= 0) {
			dralet_device_set_int(dev, "renderIndex", nodes[i]->render_minor);
			snprintf(path, sizeof(path), "dri/renderD%d", nodes[i]->render_minor);
			gpu_add_node(ctx, dev, path, GPU_DRM_MAJOR, (unsigned)nodes[i]->render_minor,
				     true);
		}
	gpu_set_defaults(dev);
		add_kfd(ctx, st, dev);
		dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	}
	return 0;
}

/* What set_shared needs, for the partitions amdgpu_partition.c publishes. */
struct amd_describe {
	struct dralet_backend_ctx *ctx;
	struct amd_state *st;
	const struct amd_facts *a;
	const struct amd_kfd_node *node;	/* the whole GPU's, summed */
};

static void describe_partition(struct dralet_device *dev, void *arg)
{
	const struct amd_describe *d = arg;
	const struct gpu_info *info = gpu_info_of(dev);
	struct amd_kfd_node part = *d->node;
	unsigned count = info && info->partition_count ? info->partition_count : 1;

	part.simd_count /= count;
	set_shared(d->st, dev, d->a, &part);
	/* NPS1: every partition reaches all of the GPU's memory */
	if (d->a->vram)
		dralet_device_set_capacity_bytes(dev, "memory", d->a->vram);
}

/*
 * A GPU dralet may partition at prepare: the whole GPU as in its base mode
 * (SPX; the KFD nodes summed when dralet switched it), its counter set and
 * every partition of the plan.
 */
static int probe_dynamic(struct dralet_backend_ctx *ctx, struct amd_state *st,
			 const struct dralet_pci_func *f, struct amd_facts *a, const char *base,
			 const struct amd_kfd_node *const *nodes, size_t n)
{
	struct amd_kfd_node whole = { .render_minor = -1 };
	char available[128] = "";
	struct dralet_device *dev;
	int r;

	for (size_t i = 0; i < n; i++) {
		whole.simd_count += nodes[i]->simd_count;
		whole.num_xcc += nodes[i]->num_xcc;
		if (!whole.simd_per_cu)
			whole.simd_per_cu = nodes[i]->simd_per_cu;
		if (!whole.gfx_target_version)
			whole.gfx_target_version = nodes[i]->gfx_target_version;
	}
	/* published as before dralet switched it */
	snprintf(a->compute, sizeof(a->compute), "%s", base);
	snprintf(a->profile, sizeof(a->profile), "%s%s%s", a->compute, a->memory_mode[0] ? "_" : "",
		 a->memory_mode);
	gpu_read_pci_text(ctx, f, "available_compute_partition", available, sizeof(available));
	for (char *c = available; *c; c++)
		*c = (char)tolower((unsigned char)*c);

	if ((r = dralet_device_new(ctx, f, "gpu", NULL, &dev)) < 0)
		return r;
	if (!gpu_info_attach(dev, GPU_TYPE_FULL))
		return -ENOMEM;
	gpu_set_common(dev, "amdgpu");
	set_shared(st, dev, a, &whole);
	if (a->vram)
		dralet_device_set_capacity_bytes(dev, "memory", a->vram);
	gpu_set_defaults(dev);
	gpu_add_drm_nodes(ctx, dev, f);
	add_kfd(ctx, st, dev);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return amd_partition_probe(ctx, f, dev, &(struct amd_partition_facts){
		.compute = base, .available = available, .memory = a->memory_mode,
		.num_xcc = (unsigned)whole.num_xcc },
		describe_partition, &(struct amd_describe){ ctx, st, a, &whole });
}

static int amd_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		     const struct dralet_pci_id *id)
{
	struct amd_state *st = dralet_ctx_state(ctx);
	const struct amd_kfd_node *nodes[MAX_PARTITIONS];
	struct dralet_device *dev;
	struct amd_facts a;
	size_t n;
	int r;

	(void)id;
	if (!st)
		return -EINVAL;
	read_facts(ctx, f, &a);
	n = amd_kfd_nodes_of(&st->kfd, f, nodes, MAX_PARTITIONS);
	if (n > MAX_PARTITIONS) {
		dralet_ctx_warn(ctx, "%s: %zu KFD nodes; only %d partitions published", f->address, n,
				MAX_PARTITIONS);
		n = MAX_PARTITIONS;
	}
	{
		char base[16];
		if (amd_partition_applies(ctx, f, base, sizeof(base))) {
			r = probe_dynamic(ctx, st, f, &a, base, nodes, n);
			return r < 0 ? r : 0;
		}
	}
	if (n > 1)
		return probe_partitions(ctx, st, f, &a, nodes, n);

	if ((r = dralet_device_new(ctx, f, "gpu", NULL, &dev)) < 0)
		return r;
	if (!gpu_info_attach(dev, GPU_TYPE_FULL))
		return -ENOMEM;
	gpu_set_common(dev, "amdgpu");
	set_shared(st, dev, &a, n ? nodes[0] : NULL);
	if (a.vram)
		dralet_device_set_capacity_bytes(dev, "memory", a.vram);
	else if (n && nodes[0]->local_mem_size)
		dralet_device_set_capacity_bytes(dev, "memory", nodes[0]->local_mem_size);
	gpu_set_defaults(dev);
	gpu_add_drm_nodes(ctx, dev, f);
	add_kfd(ctx, st, dev);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return vfio_form_enabled(ctx) ? gpu_vfio_form_add(ctx, f, dev) : 0;
}

static int amd_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       struct dralet_prepare_req *req)
{
	const struct gpu_info *info = gpu_info_of(dev);
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	struct gpu_config cfg;
	char memory[16] = "", why[400];
	int r;

	if (gpu_is_vfio_form(dev))
		return gpu_vfio_form_prepare(ctx, dev, req);
	if ((r = gpu_config_parse_amd(ctx, req->config, &cfg)) < 0)
		return r;
	if (cfg.kind == GPU_CONFIG_MIG || (cfg.sharing && !req->admin_access)) {
		dralet_ctx_error(ctx, "device %s: %s", dralet_device_name(dev),
				 cfg.sharing ? "sharing strategy TimeSlicing is not supported by "
					       "this device"
					     : "MigDeviceConfig applies to NVIDIA MIG devices only");
		return cfg.sharing ? -EOPNOTSUPP : -EINVAL;
	}
	/* adminAccess watches: it never switches a GPU's mode */
	if (info && info->dynamic && !req->admin_access)
		return amd_partition_prepare(ctx, dev, req, cfg.memory_partition);
	if (f)
		gpu_read_pci_text(ctx, f, "current_memory_partition", memory, sizeof(memory));
	if ((r = amd_memory_partition_check(memory, cfg.memory_partition, why, sizeof(why))) < 0) {
		dralet_ctx_error(ctx, "device %s: %s", dralet_device_name(dev), why);
		return r;
	}
	if (info && info->dynamic)
		return gpu_prepare_env(ctx, dev, req);	/* no partition made yet: no nodes */
	return gpu_prepare_common(ctx, dev, req);
}

static int amd_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)dev;
	(void)claim;
	return amd_partition_owns_undo(undo) ? amd_partition_unprepare(ctx, undo)
					      : gpu_vfio_form_unprepare(ctx, undo);
}

/* Instinct MI300 parts are processing accelerators (0x12), the rest display
 * controllers (0x03); HDMI audio (0x04) is not a GPU. */
static const struct dralet_pci_id amd_ids[] = {
	DRALET_PCI_VENDOR_CLASS(0x1002, 0x030000, 0xff0000),
	DRALET_PCI_VENDOR_CLASS(0x1002, 0x120000, 0xff0000),
	{ 0, 0, 0, 0 },
};

const struct dralet_backend gpu_amdgpu_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "amdgpu",
	.family = "gpu",
	.default_driver = GPU_DRIVER_DEFAULT,
	.ids = amd_ids,
	.filter = amd_filter,
	.init = amd_init,
	.fini = amd_fini,
	.probe = amd_probe,
	.options = amd_options,
	.validate_config = gpu_validate_config_amd,
	.prepare = amd_prepare,
	.unprepare = amd_unprepare,
	.health = gpu_health_pci,
};
