/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MIG devices of a GPU in MIG mode, as NVML describes the ones that exist
 * (static MIG: they are created by the operator or mig-parted, not by us).
 *
 * Each becomes a device of kind "mig" named mig-<gpu address>-<profile>-
 * <GI placement start> ("mig-0000-18-00-0-1g-10gb-0"); a compute instance
 * smaller than its GPU instance adds "-ci<id>" so that the compute
 * instances of one GPU instance stay apart. A container needs the GPU's
 * /dev/nvidia<minor>, nvidiactl, nvidia-uvm* and the nvidia-cap nodes of
 * the GPU instance's and the compute instance's access capability.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvidia.h"

struct mig_facts {
	char uuid[GPU_UUID_MAX];
	char profile[48];
	unsigned gi, ci, start, size;
	struct nvml_device_attributes attrs;
	bool have_attrs;
	unsigned long long memory;
};

/* go-nvlib's rule for the "<N>gb" part when NVML has no profile name: the
 * instance's share of the GPU's memory rounded up to eighths, times the
 * GPU's memory in whole GiB, rounded. */
static unsigned profile_gb(unsigned long long mib, unsigned long long gpu_bytes)
{
	const unsigned long long MiB = 1024ull * 1024ull, GiB = MiB * 1024ull;
	unsigned long long eighths, total_gb;

	if (gpu_bytes < MiB)
		return (unsigned)((mib + 1023) / 1024);
	eighths = (mib * MiB * 8 + gpu_bytes - 1) / gpu_bytes;
	total_gb = (gpu_bytes + GiB - 1) / GiB;
	return (unsigned)((eighths * total_gb + 4) / 8);
}

/* The GPU instance profile name ("1g.10gb", "1g.10gb+me") of @profile_id. */
static int gi_profile_name(const struct nvml *n, nvml_device parent, unsigned profile_id,
			   unsigned long long gpu_bytes, char *buf, size_t size)
{
	/* profile indexes are small (NVML_GPU_INSTANCE_PROFILE_COUNT grows
	 * with new GPUs); ids are what GPU instances report */
	for (unsigned p = 0; p < 32; p++) {
		struct nvml_gi_profile_v2 v2 = { .version = NVML_GI_PROFILE_V2_VERSION };
		struct nvml_gi_profile_v1 v1;

		if (n->gi_profile_v2 && n->gi_profile_v2(parent, p, &v2) == NVML_OK) {
			if (v2.id != profile_id)
				continue;
			v2.name[sizeof(v2.name) - 1] = '\0';
			const char *name = v2.name;
			if (!strncmp(name, "MIG ", 4))
				name += 4;
			if (gpu_text_ok(name) && strlen(name) < size && !strchr(name, ' ')) {
				snprintf(buf, size, "%s", name);
				return 0;
			}
			snprintf(buf, size, "%ug.%ugb", v2.slices,
				 profile_gb(v2.memory_mib, gpu_bytes));
			return 0;
		}
		if (n->gi_profile_v1 && n->gi_profile_v1(parent, p, &v1) == NVML_OK &&
		    v1.id == profile_id) {
			snprintf(buf, size, "%ug.%ugb", v1.slices, profile_gb(v1.memory_mib, gpu_bytes));
			return 0;
		}
	}
	return -ENOENT;
}

static int read_mig(struct dralet_backend_ctx *ctx, const struct nvml *n, nvml_device parent,
		    nvml_device mig, const struct nvidia_gpu_facts *gpu, struct mig_facts *m,
		    const char *address)
{
	struct nvml_gpu_instance_info gi_info;
	struct nvml_memory mem;
	nvml_gpu_instance gi;
	char gi_profile[24];
	int r;

	if (!n->uuid || !n->gpu_instance_id || !n->compute_instance_id || !n->gpu_instance_by_id ||
	    !n->gpu_instance_info) {
		dralet_ctx_warn(ctx, "%s: this NVML lacks the MIG calls; MIG devices not published",
				address);
		return -ENOSYS;
	}
	if ((r = n->uuid(mig, m->uuid, sizeof(m->uuid))) != NVML_OK ||
	    (r = n->gpu_instance_id(mig, &m->gi)) != NVML_OK ||
	    (r = n->compute_instance_id(mig, &m->ci)) != NVML_OK ||
	    (r = n->gpu_instance_by_id(parent, m->gi, &gi)) != NVML_OK ||
	    (r = n->gpu_instance_info(gi, &gi_info)) != NVML_OK) {
		dralet_ctx_warn(ctx, "%s: a MIG device cannot be described: %s", address,
				nvml_error(n, r));
		return -EIO;
	}
	m->uuid[sizeof(m->uuid) - 1] = '\0';
	if (!gpu_text_ok(m->uuid)) {
		dralet_ctx_warn(ctx, "%s: MIG device with an unusable UUID skipped", address);
		return -EINVAL;
	}
	m->start = gi_info.placement_start;
	m->size = gi_info.placement_size;
	m->have_attrs = n->attributes && n->attributes(mig, &m->attrs) == NVML_OK;
	if (n->memory && n->memory(mig, &mem) == NVML_OK)
		m->memory = mem.total;
	else if (m->have_attrs)
		m->memory = m->attrs.memory_mib * 1024ull * 1024ull;
	if (gi_profile_name(n, parent, gi_info.profile_id, gpu->memory, gi_profile,
			    sizeof(gi_profile)) < 0) {
		dralet_ctx_warn(ctx, "%s: MIG device %s: GPU instance profile %u unknown; skipped",
				address, m->uuid, gi_info.profile_id);
		return -ENOENT;
	}
	/* a compute instance smaller than its GPU instance: "1c.2g.20gb" */
	if (m->have_attrs && m->attrs.compute_instance_slices &&
	    m->attrs.compute_instance_slices < m->attrs.gpu_instance_slices)
		snprintf(m->profile, sizeof(m->profile), "%uc.%s", m->attrs.compute_instance_slices,
			 gi_profile);
	else
		snprintf(m->profile, sizeof(m->profile), "%s", gi_profile);
	return 0;
}

static int add_caps_node(struct dralet_backend_ctx *ctx, const struct nvidia_state *st,
			 struct dralet_device *dev, int cap_minor)
{
	char path[64];

	snprintf(path, sizeof(path), "nvidia-caps/nvidia-cap%d", cap_minor);
	return gpu_add_node(ctx, dev, path, st->caps_major, (unsigned)cap_minor, true);
}

static int publish_mig(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		       const struct dralet_pci_func *func, nvml_device parent,
		       const struct nvidia_gpu_facts *gpu, const struct mig_facts *m)
{
	struct dralet_device *dev;
	struct gpu_info *info;
	char suffix[64];
	int gi_minor, ci_minor, r;

	/* without its capability nodes no container could use the device */
	gi_minor = gpu->minor >= 0 ? nvidia_cap_minor(ctx, st, (unsigned)gpu->minor, m->gi, -1) : -ENOENT;
	ci_minor = gpu->minor >= 0 ? nvidia_cap_minor(ctx, st, (unsigned)gpu->minor, m->gi, (int)m->ci)
				   : -ENOENT;
	if (gi_minor < 0 || ci_minor < 0) {
		dralet_ctx_warn(ctx, "%s: MIG device %s (gi %u, ci %u): no gpu%d/gi%u%s/access in "
				     "proc driver/nvidia-caps/mig-minors; not published",
				func->address, m->uuid, m->gi, m->ci, gpu->minor, m->gi,
				gi_minor < 0 ? "" : "/ci*");
		return 0;
	}
	if (m->have_attrs && m->attrs.compute_instance_slices &&
	    m->attrs.compute_instance_slices < m->attrs.gpu_instance_slices)
		snprintf(suffix, sizeof(suffix), "%s-%u-ci%u", m->profile, m->start, m->ci);
	else
		snprintf(suffix, sizeof(suffix), "%s-%u", m->profile, m->start);
	r = dralet_device_new(ctx, func, "mig", suffix, &dev);
	if (r == -EEXIST) {
		dralet_ctx_warn(ctx, "%s: two MIG devices named %s; %s skipped", func->address, suffix,
				m->uuid);
		return 0;
	}
	if (r < 0)
		return r;
	info = gpu_info_attach(dev, GPU_TYPE_MIG);
	if (!info)
		return -ENOMEM;
	snprintf(info->uuid, sizeof(info->uuid), "%s", m->uuid);
	snprintf(info->parent_uuid, sizeof(info->parent_uuid), "%s", gpu->uuid);
	snprintf(info->profile, sizeof(info->profile), "%s", m->profile);
	info->minor = gpu->minor;
	info->index = gpu->index;
	info->gi = m->gi;
	info->ci = m->ci;
	info->caps_known = true;

	gpu_set_common(dev, "mig");
	dralet_device_set_string(dev, "uuid", m->uuid);
	if (gpu->uuid[0])
		dralet_device_set_string(dev, "parentUUID", gpu->uuid);
	dralet_device_set_string(dev, "migProfile", m->profile);
	dralet_device_set_int(dev, "placementStart", m->start);
	dralet_device_set_int(dev, "placementSize", m->size);
	nvidia_set_identity(ctx, st, dev, gpu);
	if (m->memory)
		dralet_device_set_capacity_bytes(dev, "memory", m->memory);
	if (m->have_attrs) {
		dralet_device_set_capacity_int(dev, "multiprocessors", m->attrs.multiprocessors);
		dralet_device_set_capacity_int(dev, "copyEngines", m->attrs.copy_engines);
		dralet_device_set_capacity_int(dev, "decoders", m->attrs.decoders);
		dralet_device_set_capacity_int(dev, "encoders", m->attrs.encoders);
		dralet_device_set_capacity_int(dev, "jpegEngines", m->attrs.jpeg_engines);
		dralet_device_set_capacity_int(dev, "ofaEngines", m->attrs.ofa_engines);
	}
	gpu_set_defaults(dev);
	nvidia_add_nodes(ctx, st, dev, gpu->minor);
	if (add_caps_node(ctx, st, dev, gi_minor) < 0 || add_caps_node(ctx, st, dev, ci_minor) < 0)
		info->caps_known = false;	/* prepare refuses it with a clear error */
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	r = nvidia_watch_add(st, dev, parent,
			     &(struct nvidia_place){ .mig = true, .gi = m->gi, .ci = m->ci });
	return r < 0 ? r : 1;
}

int nvidia_probe_mig(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		     const struct dralet_pci_func *func, nvml_device handle,
		     const struct nvidia_gpu_facts *gpu)
{
	const struct nvml *n = st->nvml;
	unsigned count = 0;
	int published = 0, r;

	if (!n->max_mig_devices || !n->mig_device_by_index ||
	    n->max_mig_devices(handle, &count) != NVML_OK) {
		dralet_ctx_warn(ctx, "%s: MIG is on but NVML cannot list MIG devices", func->address);
		return 0;
	}
	if (count > 64)
		count = 64;
	for (unsigned i = 0; i < count; i++) {
		struct mig_facts m = { 0 };
		nvml_device mig;

		r = n->mig_device_by_index(handle, i, &mig);
		if (r == NVML_ERR_NOT_FOUND || r == NVML_ERR_NOT_SUPPORTED)
			continue;
		if (r != NVML_OK) {
			dralet_ctx_warn(ctx, "%s: MIG device %u: %s", func->address, i,
					nvml_error(n, r));
			continue;
		}
		if (read_mig(ctx, n, handle, mig, gpu, &m, func->address) < 0)
			continue;
		r = publish_mig(ctx, st, func, handle, gpu, &m);
		if (r < 0)
			return r;
		published += r;
	}
	if (!published)
		dralet_ctx_warn(ctx, "%s: MIG is on but no usable MIG device exists; nothing "
				     "published for this GPU", func->address);
	return published;
}
