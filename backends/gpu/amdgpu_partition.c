/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AMD compute partitions made at prepare (amdgpu_partition.h; the rules in
 * docs/sharing.md, "AMD compute partitions").
 *
 * Publishing: the full GPU owns a counter set named after it, one counter
 * per XCC ("xcc-0" .. "xcc-7" on an MI300X), and consumes all of it; every
 * partition of every planned mode ("partition-<gpu>-dpx-1") consumes the
 * XCCs it would own. The scheduler so never hands out the whole GPU with a
 * partition, nor two partitions sharing an XCC; two partitions of different
 * modes that share none (DPX 0 and CPX 7) are refused at prepare, as one
 * GPU is in one mode at a time.
 *
 * State, in the directory of option partitionStateDir (default the
 * driver's state directory, dralet_ctx_state_dir, which outlives restarts):
 *   amdgpu-partition-<address>            the mark: the GPU's mode before
 *                                         dralet switched it ("spx")
 *   amdgpu-partition-<address>.held.<p>   one per prepared partition <p>
 *   amdgpu-partition-<address>.lock       flock'ed around every change
 * A GPU with the mark is ours to switch back also after a restart; a GPU
 * not in SPX without it is someone else's partitioning and is left alone.
 *
 * Prepare records the undo state (GPU, partition, base mode) first, then
 * the mark and its holder file, then switches current_compute_partition
 * when the GPU is in another mode. Unprepare removes the holder; the last
 * one out switches the GPU back to the base mode and removes the mark. A
 * crash between any two steps leaves an undo state the same unprepare
 * finishes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>
#include <dralet/prepare.h>

#include "amdgpu_partition.h"

#define UNDO_GPU "amdgpu.partition.gpu"
#define UNDO_PARTITION "amdgpu.partition.device"
#define UNDO_BASE "amdgpu.partition.base"

#define HELD ".held."

/* ---- state files ---- */

struct amd_paths {
	char dir[4096];
	char mark[4200];	/* the mark; also the prefix of the others */
};

static bool state_paths(struct dralet_backend_ctx *ctx, const char *address,
			struct amd_paths *p)
{
	const char *dir = dralet_ctx_option(ctx, "partitionStateDir");

	if (!dir || !*dir)
		dir = dralet_ctx_state_dir(ctx);
	if (!dir || strlen(dir) >= sizeof(p->dir))
		return false;
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	return snprintf(p->mark, sizeof(p->mark), "%s/amdgpu-partition-%s", dir, address) <
	       (int)sizeof(p->mark) - 64;
}

/* The base mode the mark keeps into @buf; false without a mark. */
static bool read_mark(const struct amd_paths *p, char *buf, size_t size)
{
	FILE *f = fopen(p->mark, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok && amd_mode_count(buf, 8) > 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

static int lock_gpu(const struct amd_paths *p)
{
	char path[4300];
	int fd;

	mkdir(p->dir, 0755);
	snprintf(path, sizeof(path), "%s.lock", p->mark);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void unlock_gpu(int fd)
{
	if (fd >= 0)
		close(fd);	/* releases the flock */
}

static void holder_path(const struct amd_paths *p, const char *partition, char *buf, size_t size)
{
	snprintf(buf, size, "%s" HELD "%s", p->mark, partition);
}

/* The first holder whose mode is not @mode into @other ("" when every
 * holder is of @mode); the count of holders, or -errno. */
static int holders(const struct amd_paths *p, const char *mode, char *other, size_t size)
{
	const char *base = strrchr(p->mark, '/') + 1;
	size_t prefix = strlen(base) + strlen(HELD);
	struct dirent *e;
	DIR *d;
	int n = 0;

	other[0] = '\0';
	if (!(d = opendir(p->dir)))
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		const char *part = e->d_name + prefix;

		if (strncmp(e->d_name, base, strlen(base)) ||
		    strncmp(e->d_name + strlen(base), HELD, strlen(HELD)))
			continue;
		n++;
		if (mode && (strncmp(part, mode, strlen(mode)) || part[strlen(mode)] != '-') &&
		    !other[0])
			snprintf(other, size, "%s", part);
	}
	closedir(d);
	return n;
}

/* ---- which GPUs ---- */

static bool option_on(struct dralet_backend_ctx *ctx)
{
	const char *opt = dralet_ctx_option(ctx, "dynamicPartitions");

	return opt && !strcmp(opt, "true");
}

static void lower_copy(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src[i] && i + 1 < size; i++)
		dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] - 'A' + 'a' : src[i]);
	dst[i] = '\0';
}

static void upper_copy(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src[i] && i + 1 < size; i++)
		dst[i] = (char)(src[i] >= 'a' && src[i] <= 'z' ? src[i] - 'a' + 'A' : src[i]);
	dst[i] = '\0';
}

static bool read_attr(struct dralet_backend_ctx *ctx, const char *address, const char *file,
		      char *buf, size_t size)
{
	const struct dralet_pci_func *f = dralet_ctx_find_pci(ctx, address);
	char raw[128];

	if (!f || !gpu_read_pci_text(ctx, f, file, raw, sizeof(raw)))
		return false;
	lower_copy(buf, size, raw);
	return true;
}

bool amd_partition_applies(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			   char *ret_base_mode, size_t size)
{
	struct amd_paths p;
	char mode[16];

	if (!option_on(ctx))
		return false;
	if (state_paths(ctx, func->address, &p) && read_mark(&p, ret_base_mode, size))
		return true;	/* switched by us: published as before the switch */
	if (!read_attr(ctx, func->address, "current_compute_partition", mode, sizeof(mode)) ||
	    strcmp(mode, "spx"))
		return false;	/* not partitionable, or someone else's partitions */
	snprintf(ret_base_mode, size, "spx");
	return true;
}

/* ---- publishing ---- */

static int xcc_counters(struct dralet_device *dev, const char *set, unsigned first, unsigned n,
			bool own)
{
	char name[16];
	int r;

	for (unsigned k = first; k < first + n; k++) {
		snprintf(name, sizeof(name), "xcc-%u", k);
		if (own && (r = dralet_device_set_counter_int(dev, set, name, 1)) < 0)
			return r;
		if ((r = dralet_device_consume_counter_int(dev, set, name, 1)) < 0)
			return r;
	}
	return 0;
}

static int publish_partition(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			     const char *set, const struct amd_partition_plan *plan,
			     const struct amd_mode *m, unsigned index, const char *memory,
			     void (*describe)(struct dralet_device *dev, void *arg), void *arg)
{
	struct dralet_device *dev;
	struct gpu_info *info;
	char suffix[32], profile[40];
	unsigned first, n;
	int r;

	snprintf(suffix, sizeof(suffix), "%s-%u", m->name, index);
	r = dralet_device_new(ctx, func, "partition", suffix, &dev);
	if (r == -EEXIST)
		return 0;
	if (r < 0)
		return r;
	if (!(info = gpu_info_attach(dev, GPU_TYPE_PARTITION)))
		return -ENOMEM;
	snprintf(profile, sizeof(profile), "%s%s%s", m->name, memory[0] ? "_" : "", memory);
	info->index = (int)index;
	info->dynamic = true;
	snprintf(info->profile, sizeof(info->profile), "%s", profile);
	snprintf(info->partition_mode, sizeof(info->partition_mode), "%s", m->name);
	info->partition_count = m->count;
	gpu_set_common(dev, "amdgpu-partition");
	describe(dev, arg);
	/* the partition's own facts over the GPU's */
	dralet_device_set_string(dev, "partitionProfile", profile);
	dralet_device_set_string(dev, "computePartition", m->name);
	dralet_device_set_int(dev, "partitionIndex", (int64_t)index);
	dralet_device_set_int(dev, "partitionCount", (int64_t)m->count);
	amd_partition_xccs(m, plan->num_xcc, index, &first, &n);
	dralet_device_set_capacity_int(dev, "xccs", (int64_t)n);
	gpu_set_defaults(dev);
	if ((r = xcc_counters(dev, set, first, n, false)) < 0)
		return r;
	dralet_device_set_partition(dev, true);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return 1;
}

int amd_partition_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			struct dralet_device *full, const struct amd_partition_facts *facts,
			void (*describe)(struct dralet_device *dev, void *arg), void *arg)
{
	const char *set = dralet_device_name(full);
	struct amd_partition_plan plan;
	int published = 0, r;

	if (amd_partition_plan(facts, &plan) < 0)
		return 0;
	if ((r = xcc_counters(full, set, 0, plan.num_xcc, true)) < 0)
		return r;
	dralet_device_set_capacity_int(full, "xccs", (int64_t)plan.num_xcc);
	for (size_t i = 0; i < plan.n_modes; i++)
		for (unsigned k = 0; k < plan.modes[i].count; k++) {
			r = publish_partition(ctx, func, set, &plan, &plan.modes[i], k,
					      facts->memory ? facts->memory : "", describe, arg);
			if (r < 0)
				return r;
			published += r;
		}
	return published;
}

/* ---- prepare and unprepare ---- */

/* Puts partition @partition of @address back: its holder goes; the last
 * one out switches the GPU to @base and removes the mark. Under the lock. */
static int release_locked(struct dralet_backend_ctx *ctx, const struct amd_paths *p,
			  const char *address, const char *partition, const char *base)
{
	char path[4400], other[64], now[16], want[16];
	int r;

	holder_path(p, partition, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	if ((r = holders(p, NULL, other, sizeof(other))) != 0)
		return r < 0 ? r : 0;	/* other partitions still held */
	if (read_attr(ctx, address, "current_compute_partition", now, sizeof(now)) &&
	    strcmp(now, base)) {
		upper_copy(want, sizeof(want), base);
		if ((r = dralet_pci_attr_write(ctx, address, "current_compute_partition", want)) < 0) {
			dralet_ctx_error(ctx, "GPU %s: cannot switch the compute partition mode back "
					      "from %s to %s: %s", address, now, base, strerror(-r));
			return r;
		}
	}
	if (unlink(p->mark) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Adds /dev/dri/renderD<minor> and /dev/kfd to the edits. */
static int partition_nodes(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct amd_kfd_node *node, struct dralet_prepare_req *req)
{
	char rel[32], path[DRALET_DEVNODE_PATH_MAX], num[16];
	struct dralet_devnode n;
	int kfd_major = dralet_char_major(ctx, "kfd"), r;

	snprintf(rel, sizeof(rel), "dri/renderD%d", node->render_minor);
	if ((r = dralet_devnode(ctx, rel, GPU_DRM_MAJOR, (unsigned)node->render_minor, path, &n)) < 0 ||
	    !n.path || (r = dralet_edits_add_node(req->edits, &n, NULL)) < 0) {
		dralet_ctx_error(ctx, "device %s: the partition's node /dev/%s is missing",
				 dralet_device_name(dev), rel);
		return r < 0 ? r : -ENODEV;
	}
	if ((r = dralet_devnode(ctx, "kfd", kfd_major > 0 ? (unsigned)kfd_major : 0, 0, path,
				&n)) < 0 || !n.path || (r = dralet_edits_add_node(req->edits, &n, NULL)) < 0) {
		dralet_ctx_error(ctx, "device %s: /dev/kfd is missing", dralet_device_name(dev));
		return r < 0 ? r : -ENODEV;
	}
	snprintf(num, sizeof(num), "%d", node->render_minor);
	if ((r = gpu_env(dev, req->edits, "RENDER_MINOR", num)) < 0)
		return r;
	return gpu_env(dev, req->edits, "COMPUTE_PARTITION", gpu_info_of(dev)->partition_mode);
}

/* The KFD node of partition @index once the GPU is in its mode. */
static int find_node(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		     const struct gpu_info *info, struct amd_kfd_node *ret)
{
	const struct amd_kfd_node *nodes[AMD_XCC_MAX];
	struct amd_kfd kfd;
	size_t n;
	int r;

	if ((r = amd_kfd_read(ctx, &kfd)) < 0)
		return r;
	n = amd_kfd_nodes_of(&kfd, f, nodes, AMD_XCC_MAX);
	r = -ENODEV;
	if (n == info->partition_count && info->index >= 0 && (size_t)info->index < n &&
	    nodes[info->index]->render_minor >= 0) {
		*ret = *nodes[info->index];
		r = 0;
	} else
		dralet_ctx_error(ctx, "GPU %s: in %s mode the KFD topology shows %zu partitions, "
				      "not %u", f->address, info->partition_mode, n,
				 info->partition_count);
	amd_kfd_free(&kfd);
	return r;
}

/* Switches @f to @info's mode unless it is in it; the kernel's refusal
 * said plainly. */
static int switch_mode(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		       const struct gpu_info *info)
{
	char now[16], want[16];
	int r;

	if (read_attr(ctx, f->address, "current_compute_partition", now, sizeof(now)) &&
	    !strcmp(now, info->partition_mode))
		return 0;
	upper_copy(want, sizeof(want), info->partition_mode);
	r = dralet_pci_attr_write(ctx, f->address, "current_compute_partition", want);
	if (r == -EBUSY)
		dralet_ctx_error(ctx, "GPU %s: the driver refused to switch to %s (EBUSY): a "
				      "process holds the GPU through /dev/kfd", f->address, want);
	else if (r == -EINVAL)
		dralet_ctx_error(ctx, "GPU %s: the driver refused %s under its memory partition "
				      "mode (EINVAL)", f->address, want);
	return r;
}

static int prepare_locked(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req, const struct amd_paths *p,
			  const char *partition)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct gpu_info *info = gpu_info_of(dev);
	char base[16], now[16] = "", other[64], path[4400];
	struct amd_kfd_node node;
	bool have_mark = read_mark(p, base, sizeof(base));
	int r;

	if (!have_mark) {
		if (!read_attr(ctx, f->address, "current_compute_partition", now, sizeof(now)) ||
		    strcmp(now, "spx")) {
			dralet_ctx_error(ctx, "device %s: GPU %s is in %s mode, not set by dralet; "
					      "its partitions are someone else's", partition,
					 f->address, now[0] ? now : "an unknown");
			return -EBUSY;
		}
		snprintf(base, sizeof(base), "spx");
	}
	if ((r = holders(p, info->partition_mode, other, sizeof(other))) < 0)
		return r;
	if (other[0]) {
		dralet_ctx_error(ctx, "GPU %s holds partition %s of another claim, in another "
				      "compute partition mode; one GPU is in one mode at a time",
				 f->address, other);
		return -EBUSY;
	}
	r = dralet_undo_set_all(req->undo, (const struct dralet_undo_value[]){
		{ UNDO_GPU, f->address }, { UNDO_PARTITION, partition }, { UNDO_BASE, base } }, 3);
	if (r < 0)
		return r;
	holder_path(p, partition, path, sizeof(path));
	if ((!have_mark && (r = write_file(p->mark, base)) < 0) || (r = write_file(path, "")) < 0) {
		dralet_ctx_error(ctx, "device %s: cannot write %s: %s", dralet_device_name(dev),
				 p->dir, strerror(-r));
		release_locked(ctx, p, f->address, partition, base);
		return r;
	}
	if ((r = switch_mode(ctx, f, info)) < 0 || (r = find_node(ctx, f, info, &node)) < 0 ||
	    (r = gpu_prepare_env(ctx, dev, req)) < 0 ||
	    (r = partition_nodes(ctx, dev, &node, req)) < 0) {
		release_locked(ctx, p, f->address, partition, base);	/* cleans up after itself */
		return r;
	}
	return 0;
}

int amd_partition_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req, const char *memory_wanted)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct gpu_info *info = gpu_info_of(dev);
	char memory[16] = "", why[400], partition[32];
	struct amd_paths p;
	int fd, r;

	if (!f || !info)
		return -ENODEV;
	read_attr(ctx, f->address, "current_memory_partition", memory, sizeof(memory));
	if ((r = amd_memory_partition_check(memory, memory_wanted, why, sizeof(why))) < 0) {
		dralet_ctx_error(ctx, "device %s: %s", dralet_device_name(dev), why);
		return r;
	}
	if (!state_paths(ctx, f->address, &p)) {
		dralet_ctx_error(ctx, "device %s: no state directory to keep the GPU's partitioning "
				      "in (dralet run, or option partitionStateDir)",
				 dralet_device_name(dev));
		return -ENOTDIR;
	}
	snprintf(partition, sizeof(partition), "%s-%d", info->partition_mode, info->index);
	if ((fd = lock_gpu(&p)) < 0) {
		dralet_ctx_error(ctx, "device %s: cannot lock %s.lock: %s", dralet_device_name(dev),
				 p.mark, strerror(-fd));
		return fd;
	}
	r = prepare_locked(ctx, dev, req, &p, partition);
	unlock_gpu(fd);
	return r;
}

bool amd_partition_owns_undo(const struct dralet_undo *undo)
{
	return dralet_undo_get(undo, UNDO_GPU) != NULL;
}

int amd_partition_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo)
{
	const char *address = dralet_undo_get(undo, UNDO_GPU);
	const char *partition = dralet_undo_get(undo, UNDO_PARTITION);
	const char *base = dralet_undo_get(undo, UNDO_BASE);
	struct amd_paths p;
	int fd, r;

	if (!address || !partition || !base || amd_mode_count(base, 8) == 0 ||
	    strchr(partition, '/') || !state_paths(ctx, address, &p)) {
		dralet_ctx_error(ctx, "AMD partition on %s: the undo state is incomplete",
				 address ? address : "?");
		return -EINVAL;
	}
	if ((fd = lock_gpu(&p)) < 0) {
		dralet_ctx_error(ctx, "GPU %s: cannot lock %s.lock: %s", address, p.mark,
				 strerror(-fd));
		return fd;
	}
	r = release_locked(ctx, &p, address, partition, base);
	unlock_gpu(fd);
	return r;
}
