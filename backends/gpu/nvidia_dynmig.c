/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dynamic MIG: a GPU in MIG mode without GPU instances made by someone else
 * is published as partitionable (include/dralet/counters.h). The full GPU
 * owns a counter set named after it,
 *   multiprocessors, copy-engines, decoders, encoders, jpeg-engines,
 *   ofa-engines, memory, memory-slice-0 .. memory-slice-<N-1>,
 * and consumes all of it; every GPU instance profile at every placement
 * NVML offers (nvmlDeviceGetGpuInstancePossiblePlacements_v2) is a
 * partition device "mig-<gpu address>-<profile>-<start>" consuming the
 * profile's engines and memory and one of each memory slice it covers. The
 * scheduler so never hands out two overlapping placements, or a placement
 * and the whole GPU. An engine's total is the most any profile could use at
 * once (its count times its instance count): the memory slices and the
 * multiprocessors decide where instances fit, the engines only keep a
 * profile with media engines ("+me") to its one instance.
 *
 * Prepare makes the GPU instance at the placement
 * (nvmlDeviceCreateGpuInstanceWithPlacement) and a compute instance
 * spanning it (nvmlGpuInstanceCreateComputeInstance), recording the undo
 * state before each create: GPU, profile and placement first, the GPU
 * instance id next, the compute instance id last. A compute instance that
 * cannot be made rolls the GPU instance back. Unprepare destroys what the
 * undo state names, finding a GPU instance whose id was not recorded by its
 * profile and placement, and a compute instance by trying the ids a GPU
 * instance can have, so a crash between any two steps is undone.
 *
 * Which GPUs: a GPU in MIG mode without any GPU instance is taken as
 * dynamic. While the backend may have instances on it, it is marked so by an
 * empty file "nvidia-dynamic-mig-<address>" in the directory of option
 * migStateDir (default the driver's state directory, dralet_ctx_state_dir:
 * <plugins dir>/<driver>, which outlives the agent's restarts; the other
 * commands mark nothing): written before a prepare makes an instance,
 * removed when an unprepare leaves the GPU without instances. A restart with
 * instances of prepared (or half-prepared) claims left so takes them as the
 * backend's own; a GPU with instances and no mark is someone else's: static
 * MIG, also when the backend used it dynamically before (the admin made
 * instances since). st->mig_lock keeps the mark and the instances in step
 * between prepares and unprepares running at once. Option dynamicMig
 * "false" turns it off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dralet/counters.h>
#include <dralet/prepare.h>

#include "nvidia.h"

#define UNDO_GPU "nvidia.mig.gpu"
#define UNDO_PROFILE "nvidia.mig.profile"
#define UNDO_START "nvidia.mig.start"
#define UNDO_GI "nvidia.mig.gi"
#define UNDO_CI "nvidia.mig.ci"

#define PROFILES_MAX 32
#define PLACEMENTS_MAX 16
#define INSTANCES_MAX 16
#define CI_IDS_MAX 8		/* compute instance ids of one GPU instance */
#define MEMORY_SLICES_MAX 16

struct dynmig_profile {
	struct nvml_gi_profile_v2 info;
	char name[48];		/* "1g.10gb" */
	struct nvml_placement pl[PLACEMENTS_MAX];
	unsigned n_pl;
};

/* ---- which GPUs ---- */

static bool remembered(const struct nvidia_state *st, const char *address)
{
	for (size_t i = 0; i < st->n_dynamic; i++)
		if (!strcmp(st->dynamic[i], address))
			return true;
	return false;
}

static int remember(struct nvidia_state *st, const char *address)
{
	char (*d)[32];

	if (remembered(st, address))
		return 0;
	if (!(d = realloc(st->dynamic, (st->n_dynamic + 1) * sizeof(*d))))
		return -ENOMEM;
	st->dynamic = d;
	snprintf(d[st->n_dynamic++], sizeof(*d), "%s", address);
	return 0;
}

/* Where the GPU at @address is marked: option migStateDir, else the
 * driver's state directory; false when neither is known (not dralet run). */
static bool mark_path(struct dralet_backend_ctx *ctx, const char *address, char *buf,
		      size_t size, char *dir, size_t dir_size)
{
	const char *opt = dralet_ctx_option(ctx, "migStateDir");

	if (!opt || !*opt)
		opt = dralet_ctx_state_dir(ctx);
	if (!opt)
		return false;
	snprintf(dir, dir_size, "%s", opt);
	return snprintf(buf, size, "%s/nvidia-dynamic-mig-%s", dir, address) < (int)size;
}

static bool marked(struct dralet_backend_ctx *ctx, const char *address)
{
	char path[4200], dir[4096];

	return mark_path(ctx, address, path, sizeof(path), dir, sizeof(dir)) &&
	       access(path, F_OK) == 0;
}

/* Without the mark a restart would take the GPU's instances for someone
 * else's: written before a prepare makes an instance. */
static void mark(struct dralet_backend_ctx *ctx, const char *address)
{
	char path[4200], dir[4096];
	FILE *f;

	if (!mark_path(ctx, address, path, sizeof(path), dir, sizeof(dir)) ||
	    access(path, F_OK) == 0)
		return;
	mkdir(dir, 0755);
	if (!(f = fopen(path, "w")))
		dralet_ctx_warn(ctx, "%s: cannot write %s (%m); after a restart with MIG "
				     "instances left the GPU is taken for static MIG",
				address, path);
	else
		fclose(f);
}

/* Left marked, a GPU the backend no longer uses would take instances an
 * admin makes later for the backend's own. */
static void unmark(struct dralet_backend_ctx *ctx, const char *address)
{
	char path[4200], dir[4096];

	if (mark_path(ctx, address, path, sizeof(path), dir, sizeof(dir)) && unlink(path) < 0 &&
	    errno != ENOENT)
		dralet_ctx_warn(ctx, "%s: cannot remove %s (%m); after a restart MIG instances "
				     "made by others are taken for dralet's", address, path);
}

/* The GPU's GPU instance profiles with their placements; 0 when NVML has none. */
static unsigned read_profiles(const struct nvml *n, nvml_device h, struct dynmig_profile *out)
{
	unsigned count = 0;

	for (unsigned p = 0; p < PROFILES_MAX && count < PROFILES_MAX; p++) {
		struct dynmig_profile *d = &out[count];
		const char *name;

		memset(d, 0, sizeof(*d));
		d->info.version = NVML_GI_PROFILE_V2_VERSION;
		if (n->gi_profile_v2(h, p, &d->info) != NVML_OK)
			continue;
		d->info.name[sizeof(d->info.name) - 1] = '\0';
		name = !strncmp(d->info.name, "MIG ", 4) ? d->info.name + 4 : d->info.name;
		if (!gpu_text_ok(name) || strlen(name) >= sizeof(d->name) || strchr(name, ' '))
			continue;	/* no name to publish it under */
		snprintf(d->name, sizeof(d->name), "%s", name);
		d->n_pl = PLACEMENTS_MAX;
		if (n->gi_possible_placements(h, d->info.id, d->pl, &d->n_pl) != NVML_OK ||
		    !d->n_pl || d->n_pl > PLACEMENTS_MAX)
			continue;
		count++;
	}
	return count;
}

/* True when a GPU instance exists on @h (someone's). */
static bool has_gpu_instances(const struct nvml *n, nvml_device h,
			      const struct dynmig_profile *profiles, unsigned n_profiles)
{
	for (unsigned i = 0; i < n_profiles; i++) {
		nvml_gpu_instance gis[INSTANCES_MAX];
		unsigned count = 0;
		if (n->gpu_instances(h, profiles[i].info.id, gis, &count) == NVML_OK && count)
			return true;
	}
	return false;
}

/* True when @h has no GPU instance (false when that cannot be told). */
static bool without_instances(const struct nvml *n, nvml_device h)
{
	struct dynmig_profile *profiles = calloc(PROFILES_MAX, sizeof(*profiles));
	bool none = profiles && !has_gpu_instances(n, h, profiles, read_profiles(n, h, profiles));

	free(profiles);
	return none;
}

bool nvidia_dynmig_applies(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			   const struct dralet_pci_func *func, nvml_device h)
{
	const struct nvml *n = st->nvml;
	const char *opt = dralet_ctx_option(ctx, "dynamicMig");
	struct dynmig_profile *profiles;
	unsigned n_profiles;
	bool applies;

	if ((opt && !strcmp(opt, "false")) || !n || !h || !NVML_HAS_DYNAMIC_MIG(n))
		return false;
	if (remembered(st, func->address))
		return true;
	if (!(profiles = calloc(PROFILES_MAX, sizeof(*profiles))))
		return false;
	n_profiles = read_profiles(n, h, profiles);
	applies = n_profiles && (!has_gpu_instances(n, h, profiles, n_profiles) ||
				 marked(ctx, func->address));
	free(profiles);
	return applies && remember(st, func->address) == 0;
}

/* ---- publishing ---- */

struct totals {
	unsigned long long mp, ce, dec, enc, jpeg, ofa, memory;
	unsigned memory_slices;
};

static unsigned long long most(unsigned long long a, unsigned long long b)
{
	return a > b ? a : b;
}

static void add_totals(struct totals *t, const struct dynmig_profile *p)
{
	unsigned long long k = p->info.instances ? p->info.instances : 1;

	t->mp = most(t->mp, k * p->info.multiprocessors);
	t->ce = most(t->ce, k * p->info.copy_engines);
	t->dec = most(t->dec, k * p->info.decoders);
	t->enc = most(t->enc, k * p->info.encoders);
	t->jpeg = most(t->jpeg, k * p->info.jpeg_engines);
	t->ofa = most(t->ofa, k * p->info.ofa_engines);
	t->memory = most(t->memory, k * p->info.memory_mib);
	for (unsigned i = 0; i < p->n_pl; i++)
		if (p->pl[i].start + p->pl[i].size > t->memory_slices)
			t->memory_slices = p->pl[i].start + p->pl[i].size;
}

typedef int (*counter_fn)(struct dralet_device *dev, const char *set, const char *name,
			  int64_t value);

static int set_or_consume_memory(struct dralet_device *dev, const char *set, bool own,
				 unsigned long long mib)
{
	char q[32];

	dralet_quantity_from_bytes(mib << 20, q, sizeof(q));
	return own ? dralet_device_set_counter(dev, set, "memory", q)
		   : dralet_device_consume_counter(dev, set, "memory", q);
}

/* The engine and memory counters @fn sets (own set or consumption). */
static int engine_counters(struct dralet_device *dev, const char *set, counter_fn fn, bool own,
			   unsigned long long mp, unsigned long long ce, unsigned long long dec,
			   unsigned long long enc, unsigned long long jpeg, unsigned long long ofa,
			   unsigned long long memory_mib)
{
	const struct {
		const char *name;
		unsigned long long value;
	} engines[] = {
		{ "multiprocessors", mp }, { "copy-engines", ce }, { "decoders", dec },
		{ "encoders", enc }, { "jpeg-engines", jpeg }, { "ofa-engines", ofa },
	};
	int r = 0;

	/* a zero is left out: the set has it only when some profile uses it */
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (engines[i].value && (r = fn(dev, set, engines[i].name,
						(int64_t)engines[i].value)) < 0)
			return r;
	return set_or_consume_memory(dev, set, own, memory_mib);
}

static int memory_slice(struct dralet_device *dev, const char *set, counter_fn fn, unsigned i)
{
	char name[32];

	snprintf(name, sizeof(name), "memory-slice-%u", i);
	return fn(dev, set, name, 1);
}

/* The full GPU owns the set and consumes all of it. */
static int publish_set(struct dralet_device *gpu, const struct totals *t)
{
	const char *set = dralet_device_name(gpu);
	int r;

	if ((r = engine_counters(gpu, set, dralet_device_set_counter_int, true, t->mp, t->ce,
				 t->dec, t->enc, t->jpeg, t->ofa, t->memory)) < 0 ||
	    (r = engine_counters(gpu, set, dralet_device_consume_counter_int, false, t->mp, t->ce,
				 t->dec, t->enc, t->jpeg, t->ofa, t->memory)) < 0)
		return r;
	for (unsigned i = 0; i < t->memory_slices; i++)
		if ((r = memory_slice(gpu, set, dralet_device_set_counter_int, i)) < 0 ||
		    (r = memory_slice(gpu, set, dralet_device_consume_counter_int, i)) < 0)
			return r;
	return 0;
}

static int publish_partition(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			     const struct dralet_pci_func *func, nvml_device h,
			     const struct nvidia_gpu_facts *gpu, const char *set,
			     const struct dynmig_profile *p, const struct nvml_placement *pl)
{
	const struct nvml_gi_profile_v2 *i = &p->info;
	struct dralet_device *dev;
	struct gpu_info *info;
	char suffix[64];
	int r;

	snprintf(suffix, sizeof(suffix), "%s-%u", p->name, pl->start);
	r = dralet_device_new(ctx, func, "mig", suffix, &dev);
	if (r == -EEXIST)
		return 0;
	if (r < 0)
		return r;
	if (!(info = gpu_info_attach(dev, GPU_TYPE_MIG)))
		return -ENOMEM;
	snprintf(info->parent_uuid, sizeof(info->parent_uuid), "%s", gpu->uuid);
	snprintf(info->profile, sizeof(info->profile), "%s", p->name);
	info->minor = gpu->minor;
	info->index = gpu->index;
	info->dynamic = true;
	info->profile_id = i->id;
	info->placement_start = pl->start;
	info->placement_size = pl->size;
	info->gi_slices = i->slices;

	gpu_set_common(dev, "mig");
	if (gpu->uuid[0])
		dralet_device_set_string(dev, "parentUUID", gpu->uuid);
	dralet_device_set_string(dev, "migProfile", p->name);
	dralet_device_set_int(dev, "placementStart", pl->start);
	dralet_device_set_int(dev, "placementSize", pl->size);
	nvidia_set_identity(ctx, st, dev, gpu);
	dralet_device_set_capacity_bytes(dev, "memory", i->memory_mib << 20);
	dralet_device_set_capacity_int(dev, "multiprocessors", i->multiprocessors);
	dralet_device_set_capacity_int(dev, "copyEngines", i->copy_engines);
	dralet_device_set_capacity_int(dev, "decoders", i->decoders);
	dralet_device_set_capacity_int(dev, "encoders", i->encoders);
	dralet_device_set_capacity_int(dev, "jpegEngines", i->jpeg_engines);
	dralet_device_set_capacity_int(dev, "ofaEngines", i->ofa_engines);
	gpu_set_defaults(dev);
	nvidia_add_nodes(ctx, st, dev, gpu->minor);
	if ((r = engine_counters(dev, set, dralet_device_consume_counter_int, false,
				 i->multiprocessors, i->copy_engines, i->decoders, i->encoders,
				 i->jpeg_engines, i->ofa_engines, i->memory_mib)) < 0)
		return r;
	for (unsigned k = pl->start; k < pl->start + pl->size; k++)
		if ((r = memory_slice(dev, set, dralet_device_consume_counter_int, k)) < 0)
			return r;
	dralet_device_set_partition(dev, true);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	/* no instance yet: the GPU's own health stands for it */
	r = nvidia_watch_add(st, dev, h, &(struct nvidia_place){ .mig = false });
	return r < 0 ? r : 1;
}

int nvidia_dynmig_probe(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			const struct dralet_pci_func *func, nvml_device h,
			const struct nvidia_gpu_facts *gpu, struct dralet_device *full)
{
	struct dynmig_profile *profiles = calloc(PROFILES_MAX, sizeof(*profiles));
	struct totals t = { 0 };
	unsigned n_profiles;
	int published = 0, r = 0;

	if (!profiles)
		return -ENOMEM;
	n_profiles = read_profiles(st->nvml, h, profiles);
	for (unsigned i = 0; i < n_profiles; i++)
		add_totals(&t, &profiles[i]);
	if (t.memory_slices > MEMORY_SLICES_MAX) {
		dralet_ctx_warn(ctx, "%s: %u memory slices are more than dralet publishes; MIG "
				     "partitions not published", func->address, t.memory_slices);
		goto out;
	}
	if ((r = publish_set(full, &t)) < 0)
		goto out;
	for (unsigned i = 0; i < n_profiles && r >= 0; i++)
		for (unsigned k = 0; k < profiles[i].n_pl && r >= 0; k++) {
			r = publish_partition(ctx, st, func, h, gpu, dralet_device_name(full),
					      &profiles[i], &profiles[i].pl[k]);
			published += r > 0;
		}
out:
	free(profiles);
	return r < 0 ? r : published;
}

/* ---- prepare ---- */

static int set_undo_uint(struct dralet_undo *undo, const char *key, unsigned v)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", v);
	return dralet_undo_set(undo, key, num);
}

/* The compute instance profile that spans a GPU instance of @slices. */
static int full_ci_profile(const struct nvml *n, nvml_gpu_instance gi, unsigned slices,
			   unsigned *ret_id)
{
	for (unsigned p = 0; p < 8; p++) {
		struct nvml_ci_profile_v1 ci = { 0 };
		if (n->ci_profile_v1(gi, p, NVML_CI_ENGINE_PROFILE_SHARED, &ci) == NVML_OK &&
		    ci.slices == slices) {
			*ret_id = ci.id;
			return 0;
		}
	}
	return -ENOENT;
}

/* The UUID of the MIG device of GPU instance @gi / compute instance @ci. */
static int mig_uuid(const struct nvml *n, nvml_device h, unsigned gi, unsigned ci, char *buf,
		    size_t size)
{
	unsigned count = 0;

	if (!n->max_mig_devices || !n->mig_device_by_index || !n->uuid ||
	    !n->gpu_instance_id || !n->compute_instance_id ||
	    n->max_mig_devices(h, &count) != NVML_OK)
		return -ENOSYS;
	for (unsigned i = 0; i < count && i < 64; i++) {
		nvml_device m;
		unsigned g, c;
		if (n->mig_device_by_index(h, i, &m) == NVML_OK &&
		    n->gpu_instance_id(m, &g) == NVML_OK && n->compute_instance_id(m, &c) == NVML_OK &&
		    g == gi && c == ci && n->uuid(m, buf, (unsigned)size) == NVML_OK) {
			buf[size - 1] = '\0';
			return gpu_text_ok(buf) ? 0 : -EINVAL;
		}
	}
	return -ENOENT;
}

/* The nvidia-cap node of gpu<minor>/gi<gi>[/ci<ci>]/access: the one below
 * /dev when it is there, else its canonical path with the numbers (the
 * runtime makes it in the container; nvidia-modprobe makes it on demand). */
static int add_cap(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		   struct dralet_edits *edits, int minor, unsigned gi, int ci)
{
	char dev_path[64], path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode node;
	int cap = nvidia_cap_minor(ctx, st, (unsigned)minor, gi, ci);

	if (cap < 0 || st->caps_major < 0)
		return -ENOENT;
	snprintf(dev_path, sizeof(dev_path), "nvidia-caps/nvidia-cap%d", cap);
	if (dralet_devnode(ctx, dev_path, (unsigned)st->caps_major, (unsigned)cap, path, &node) < 0 ||
	    !node.path) {
		snprintf(path, sizeof(path), "/dev/%s", dev_path);
		node = (struct dralet_devnode){ path, (unsigned)st->caps_major, (unsigned)cap };
	}
	return dralet_edits_add_node(edits, &node, NULL);
}

/* Destroys compute instance @ci (every id when NULL) and GPU instance @gi. */
static int destroy(const struct nvml *n, nvml_gpu_instance gi, const unsigned *ci_id)
{
	nvml_compute_instance ci;
	int r;

	for (unsigned id = ci_id ? *ci_id : 0; id < (ci_id ? *ci_id + 1 : CI_IDS_MAX); id++)
		if (n->ci_by_id(gi, id, &ci) == NVML_OK && (r = n->ci_destroy(ci)) != NVML_OK)
			return r;
	return n->gi_destroy(gi);
}

/* The instances a prepare made. */
struct made {
	nvml_gpu_instance gi;
	unsigned gi_id, ci_id;
};

/* Makes the GPU instance of @info at its placement and a compute instance
 * spanning it, recording in @undo before each create what undoes it; a
 * failure leaves nothing made. */
static int make_instances(struct dralet_backend_ctx *ctx, const struct nvml *n, nvml_device h,
			  const char *address, const char *name, const struct gpu_info *info,
			  struct dralet_undo *undo, struct made *m)
{
	struct nvml_placement pl = { info->placement_start, info->placement_size };
	struct nvml_gpu_instance_info gi_info;
	struct nvml_ci_info ci_info;
	nvml_compute_instance ci = NULL;
	char profile_text[16], start_text[16];
	unsigned ci_profile;
	int nr, r;

	snprintf(profile_text, sizeof(profile_text), "%u", info->profile_id);
	snprintf(start_text, sizeof(start_text), "%u", info->placement_start);
	r = dralet_undo_set_all(undo, (const struct dralet_undo_value[]){
		{ UNDO_GPU, address }, { UNDO_PROFILE, profile_text }, { UNDO_START, start_text } },
		3);
	if (r < 0)
		return r;
	if ((nr = n->create_gi_with_placement(h, info->profile_id, &pl, &m->gi)) != NVML_OK) {
		dralet_ctx_error(ctx, "device %s: cannot make the MIG GPU instance %s at placement "
				      "%u: %s", name, info->profile, pl.start, nvml_error(n, nr));
		return -EBUSY;
	}
	if ((nr = n->gpu_instance_info(m->gi, &gi_info)) != NVML_OK) {
		dralet_ctx_error(ctx, "device %s: the new GPU instance cannot be described: %s; "
				      "rolled back", name, nvml_error(n, nr));
		n->gi_destroy(m->gi);
		return -EIO;
	}
	m->gi_id = gi_info.id;
	if ((r = set_undo_uint(undo, UNDO_GI, m->gi_id)) < 0) {
		n->gi_destroy(m->gi);
		return r;
	}
	bool have_profile = full_ci_profile(n, m->gi, info->gi_slices, &ci_profile) == 0;
	if (!have_profile || (nr = n->create_ci(m->gi, ci_profile, &ci)) != NVML_OK) {
		dralet_ctx_error(ctx, "device %s: cannot make the compute instance of GPU instance "
				      "%u: %s; GPU instance rolled back", name, m->gi_id,
				 have_profile ? nvml_error(n, nr)
					      : "no compute instance profile spans it");
		destroy(n, m->gi, NULL);
		return -EBUSY;
	}
	if ((nr = n->ci_info(ci, &ci_info)) != NVML_OK) {
		dralet_ctx_error(ctx, "device %s: the new compute instance cannot be described: %s; "
				      "rolled back", name, nvml_error(n, nr));
		n->ci_destroy(ci);
		n->gi_destroy(m->gi);
		return -EIO;
	}
	m->ci_id = ci_info.id;
	if ((r = set_undo_uint(undo, UNDO_CI, m->ci_id)) < 0) {
		destroy(n, m->gi, &m->ci_id);
		return r;
	}
	return 0;
}

/* What the container gets for the instances @m of partition @dev. */
static int instance_edits(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			  nvml_device h, struct dralet_device *dev, const struct made *m,
			  struct dralet_prepare_req *req)
{
	const struct gpu_info *info = gpu_info_of(dev);
	const char *name = dralet_device_name(dev);
	char uuid[GPU_UUID_MAX], gi[16], ci[16];
	int r;

	if ((r = mig_uuid(st->nvml, h, m->gi_id, m->ci_id, uuid, sizeof(uuid))) < 0) {
		dralet_ctx_error(ctx, "device %s: the MIG device of GPU instance %u is not visible",
				 name, m->gi_id);
		return r;
	}
	if ((r = gpu_prepare_common(ctx, dev, req)) < 0)
		return r;
	if (add_cap(ctx, st, req->edits, info->minor, m->gi_id, -1) < 0 ||
	    add_cap(ctx, st, req->edits, info->minor, m->gi_id, (int)m->ci_id) < 0) {
		dralet_ctx_error(ctx, "device %s: the nvidia-cap nodes of GPU instance %u / compute "
				      "instance %u are unknown (proc driver/nvidia-caps/mig-minors)",
				 name, m->gi_id, m->ci_id);
		return -ENODEV;
	}
	snprintf(gi, sizeof(gi), "%u", m->gi_id);
	snprintf(ci, sizeof(ci), "%u", m->ci_id);
	if ((r = gpu_env(dev, req->edits, "UUID", uuid)) < 0 ||
	    (r = gpu_env(dev, req->edits, "MIG_GI", gi)) < 0 ||
	    (r = gpu_env(dev, req->edits, "MIG_CI", ci)) < 0)
		dralet_ctx_error(ctx, "device %s: cannot build container edits: %s", name,
				 strerror(-r));
	return r;
}

int nvidia_dynmig_prepare(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			  struct dralet_device *dev, struct dralet_prepare_req *req)
{
	const struct nvml *n = st->nvml;
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const char *name = dralet_device_name(dev);
	struct made m = { 0 };
	nvml_device h = NULL;
	int r;

	if (!n || !NVML_HAS_DYNAMIC_MIG(n) || !f || n->by_pci_bus_id(f->address, &h) != NVML_OK) {
		dralet_ctx_error(ctx, "device %s: NVML cannot reach GPU %s to make the MIG instance",
				 name, f ? f->address : "?");
		return -ENODEV;
	}
	pthread_mutex_lock(&st->mig_lock);
	mark(ctx, f->address);
	r = make_instances(ctx, n, h, f->address, name, gpu_info_of(dev), req->undo, &m);
	if (r >= 0 && (r = instance_edits(ctx, st, h, dev, &m, req)) < 0)
		destroy(n, m.gi, &m.ci_id);	/* a failing prepare cleans up after itself */
	if (r < 0 && without_instances(n, h))
		unmark(ctx, f->address);
	pthread_mutex_unlock(&st->mig_lock);
	return r;
}

/* ---- unprepare ---- */

static bool parse_uint(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return false;
	v = strtoul(s, &end, 10);
	if (*end || v > 0xffffffu)
		return false;
	*ret = (unsigned)v;
	return true;
}

/* The GPU instance of @profile at @start on @h, NULL when none. */
static nvml_gpu_instance find_gi(const struct nvml *n, nvml_device h, unsigned profile,
				 unsigned start, const unsigned *id)
{
	nvml_gpu_instance gis[INSTANCES_MAX];
	unsigned count = 0;

	if (id) {
		nvml_gpu_instance gi;
		struct nvml_gpu_instance_info info;
		if (n->gpu_instance_by_id(h, *id, &gi) != NVML_OK ||
		    n->gpu_instance_info(gi, &info) != NVML_OK || info.profile_id != profile ||
		    info.placement_start != start)
			return NULL;	/* gone, or another's now */
		return gi;
	}
	if (n->gpu_instances(h, profile, gis, &count) != NVML_OK)
		return NULL;
	for (unsigned i = 0; i < count && i < INSTANCES_MAX; i++) {
		struct nvml_gpu_instance_info info;
		if (n->gpu_instance_info(gis[i], &info) == NVML_OK && info.placement_start == start)
			return gis[i];
	}
	return NULL;
}

bool nvidia_dynmig_owns_undo(const struct dralet_undo *undo)
{
	return dralet_undo_get(undo, UNDO_GPU) != NULL;
}

int nvidia_dynmig_unprepare(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			    const struct dralet_undo *undo)
{
	const struct nvml *n = st ? st->nvml : NULL;
	const char *address = dralet_undo_get(undo, UNDO_GPU);
	unsigned profile, start, gi_id = 0, ci_id = 0;
	bool have_gi = parse_uint(dralet_undo_get(undo, UNDO_GI), &gi_id);
	bool have_ci = parse_uint(dralet_undo_get(undo, UNDO_CI), &ci_id);
	nvml_gpu_instance gi;
	nvml_device h;
	int nr;

	if (!parse_uint(dralet_undo_get(undo, UNDO_PROFILE), &profile) ||
	    !parse_uint(dralet_undo_get(undo, UNDO_START), &start)) {
		dralet_ctx_error(ctx, "MIG instance on %s: the undo state is incomplete", address);
		return -EINVAL;
	}
	if (!n || !NVML_HAS_DYNAMIC_MIG(n) || n->by_pci_bus_id(address, &h) != NVML_OK) {
		dralet_ctx_error(ctx, "MIG instance on %s: NVML cannot reach the GPU to destroy it",
				 address);
		return -ENODEV;
	}
	pthread_mutex_lock(&st->mig_lock);
	/* none: never made, or already destroyed */
	gi = find_gi(n, h, profile, start, have_gi ? &gi_id : NULL);
	nr = gi ? destroy(n, gi, have_ci ? &ci_id : NULL) : NVML_OK;
	if (nr != NVML_OK)
		dralet_ctx_error(ctx, "MIG instance on %s (profile %u at %u): cannot destroy it: %s",
				 address, profile, start, nvml_error(n, nr));
	else if (without_instances(n, h))
		unmark(ctx, address);
	pthread_mutex_unlock(&st->mig_lock);
	return nr == NVML_OK ? 0 : -EBUSY;
}
