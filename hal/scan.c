/* SPDX-License-Identifier: Apache-2.0 */
/* One scan of the node: opens the roots and runs the HAL modules in order. */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "hal/scan_internal.h"

void scan_warn(struct hal_scan_private *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->warn_lock);
	if (s->n_warnings >= SCAN_MAX_WARNINGS) {
		s->dropped_warnings++;
		pthread_mutex_unlock(&s->warn_lock);
		return;
	}
	if (s->n_warnings == s->cap_warnings) {
		size_t cap = s->cap_warnings ? s->cap_warnings * 2 : 16;
		const char **w = arena_alloc(s->arena, cap * sizeof(*w));
		if (!w) {
			pthread_mutex_unlock(&s->warn_lock);
			return;
		}
		if (s->n_warnings)
			memcpy(w, s->warnings, s->n_warnings * sizeof(*w));
		s->warnings = w;
		s->cap_warnings = cap;
	}
	const char *copy = arena_strdup(s->arena, buf);
	if (copy)
		s->warnings[s->n_warnings++] = copy;
	pthread_mutex_unlock(&s->warn_lock);
}

struct parallel_job {
	struct hal_scan_private *s;
	size_t begin, end;
	scan_range_fn fn;
	void *userdata;
};

static void *run_range(void *arg)
{
	struct parallel_job *j = arg;

	j->fn(j->s, j->begin, j->end, j->userdata);
	return NULL;
}

void scan_parallel(struct hal_scan_private *s, size_t n, scan_range_fn fn, void *userdata)
{
	struct parallel_job jobs[SCAN_MAX_THREADS];
	pthread_t threads[SCAN_MAX_THREADS];
	bool started[SCAN_MAX_THREADS] = { false };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t t = cpus > 1 ? (size_t)cpus : 1;

	if (t > SCAN_MAX_THREADS)
		t = SCAN_MAX_THREADS;
	/* small nodes: threads cost more than they save */
	if (n < SCAN_MIN_PER_THREAD * 2)
		t = 1;
	else if (t > n / SCAN_MIN_PER_THREAD)
		t = n / SCAN_MIN_PER_THREAD;
	for (size_t i = 0; i < t; i++) {
		jobs[i] = (struct parallel_job){ s, n * i / t, n * (i + 1) / t, fn, userdata };
		/* the calling thread takes the last share; a thread that cannot
		 * start leaves its share to it too */
		if (i + 1 < t)
			started[i] = pthread_create(&threads[i], NULL, run_range, &jobs[i]) == 0;
	}
	for (size_t i = 0; i < t; i++)
		if (!started[i])
			run_range(&jobs[i]);
	for (size_t i = 0; i < t; i++)
		if (started[i])
			pthread_join(threads[i], NULL);
}

void *scan_append(struct hal_scan_private *s, const void **array, size_t *n, size_t size)
{
	unsigned char *grown = arena_alloc(s->arena, (*n + 1) * size);

	if (!grown)
		return NULL;
	if (*n)
		memcpy(grown, *array, *n * size);
	*array = grown;
	return grown + (*n)++ * size;
}

static int compare_address(const void *key, const void *elem)
{
	return strcmp(key, ((const struct dralet_pci_func *)elem)->address);
}

struct dralet_pci_func *scan_find(struct hal_scan_private *s, const char *address)
{
	if (!s->n_funcs)
		return NULL;
	return bsearch(address, s->funcs, s->n_funcs, sizeof(*s->funcs), compare_address);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @n hex digits at @s; -1 when one is not. */
static long hex_field(const char *s, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n; i++) {
		int d = hex_digit(s[i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Called for every path component the HAL looks at, so no sscanf. */
bool hal_parse_address(const char *s, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *fn)
{
	size_t len = s ? strlen(s) : 0, dlen;
	long d, b, v;

	/* "DDDD:BB:DD.F" with a domain of 4 to 8 hex digits */
	if (len < 12 || len > 16)
		return false;
	dlen = len - 8;
	if (s[dlen] != ':' || s[dlen + 3] != ':' || s[dlen + 6] != '.' ||
	    s[dlen + 7] < '0' || s[dlen + 7] > '7')
		return false;
	d = hex_field(s, dlen);
	b = hex_field(s + dlen + 1, 2);
	v = hex_field(s + dlen + 4, 2);
	if (d < 0 || b < 0 || v < 0 || v > 31)
		return false;
	*domain = (unsigned)d;
	*bus = (unsigned)b;
	*dev = (unsigned)v;
	*fn = (unsigned)(s[dlen + 7] - '0');
	return true;
}

struct dralet_pci_func *scan_owner_of_path(struct hal_scan_private *s, const char *path)
{
	const char *end = path + strlen(path);

	while (end > path) {
		const char *start = end;
		while (start > path && start[-1] != '/')
			start--;
		size_t len = (size_t)(end - start);
		if (len >= 12 && len < 24) {
			char comp[24];
			unsigned d, b, v, f;
			memcpy(comp, start, len);
			comp[len] = '\0';
			if (hal_parse_address(comp, &d, &b, &v, &f)) {
				struct dralet_pci_func *fn = scan_find(s, comp);
				if (fn)
					return fn;
			}
		}
		end = start > path ? start - 1 : path;
	}
	return NULL;
}

int hal_root_path(const char *root, const char *relpath, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", strcmp(root, "/") ? root : "", relpath);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int hal_devnode_resolve(const struct hal_roots *roots, const char *dev_path, unsigned major,
			unsigned minor, char *path, size_t size, struct dralet_devnode *ret_node)
{
	char below_root[4096];
	struct stat st;
	int r = hal_root_path(roots->dev, dev_path, below_root, sizeof(below_root));

	*ret_node = (struct dralet_devnode){ 0 };
	if (r < 0)
		return r;
	if (stat(below_root, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (snprintf(path, size, "/dev/%s", dev_path) >= (int)size)
		return -ENAMETOOLONG;
	ret_node->path = path;
	if (S_ISCHR(st.st_mode)) {
		ret_node->major = major(st.st_rdev);
		ret_node->minor = minor(st.st_rdev);
	} else {
		ret_node->major = major;
		ret_node->minor = minor;
	}
	return 0;
}

void scan_devnode(struct hal_scan_private *s, int dirfd, const char *dev_file,
		  const char *dev_path, struct dralet_devnode *ret)
{
	unsigned major = 0, minor = 0;
	char path[4096], node[4096];
	struct stat st;

	*ret = (struct dralet_devnode){ 0 };
	if (hal_root_path(s->roots.dev, dev_path, path, sizeof(path)) < 0 || stat(path, &st) < 0)
		return;	/* no node */
	/* a real node answers with its own numbers; a simulated tree's
	 * placeholder takes them from the class device's "dev" file */
	if (S_ISCHR(st.st_mode)) {
		major = major(st.st_rdev);
		minor = minor(st.st_rdev);
	} else {
		sysfs_read_devnum(dirfd, dev_file, &major, &minor);
	}
	snprintf(node, sizeof(node), "/dev/%s", dev_path);
	ret->path = arena_strdup(s->arena, node);
	ret->major = major;
	ret->minor = minor;
}

void scan_devnode_numbers(struct hal_scan_private *s, const char *dev_path, unsigned major,
			  unsigned minor, struct dralet_devnode *ret)
{
	char path[4096];
	struct dralet_devnode node;

	if (hal_devnode_resolve(&s->roots, dev_path, major, minor, path, sizeof(path), &node) < 0 ||
	    !node.path) {
		*ret = (struct dralet_devnode){ 0 };
		return;
	}
	*ret = node;
	ret->path = arena_strdup(s->arena, node.path);
}

int hal_char_major(const struct hal_roots *roots, const char *name)
{
	char path[4096], line[256];
	bool chars = false;
	int found = -ENOENT;
	FILE *f;

	if (hal_root_path(roots->proc, "devices", path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned major;
		char drv[200];
		if (!strncmp(line, "Character devices:", 18)) {
			chars = true;
			continue;
		}
		if (!strncmp(line, "Block devices:", 14))
			break;
		if (chars && sscanf(line, "%u %199s", &major, drv) == 2 && !strcmp(drv, name)) {
			found = (int)major;
			break;
		}
	}
	fclose(f);
	return found;
}

static int open_root(const char *path)
{
	struct stat st;
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

int hal_scan(const struct hal_roots *roots, const struct hal_scan_options *opts,
	     struct hal_scan **ret_scan)
{
	static const struct hal_scan_options defaults = { 0 };
	struct hal_scan_private *s;
	struct hal_scan *scan;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s || !(s->arena = arena_new())) {
		free(s);
		return -ENOMEM;
	}
	s->opts = opts ? opts : &defaults;
	pthread_mutex_init(&s->warn_lock, NULL);
	s->roots.sys = arena_strdup(s->arena, roots->sys);
	s->roots.dev = arena_strdup(s->arena, roots->dev);
	s->roots.proc = arena_strdup(s->arena, roots->proc);
	s->sys_fd = s->proc_fd = -1;
	scan = arena_alloc(s->arena, sizeof(*scan));
	if (!scan || !s->roots.sys || !s->roots.dev || !s->roots.proc) {
		r = -ENOMEM;
		goto fail;
	}
	r = s->sys_fd = open_root(roots->sys);
	if (r < 0)
		goto fail;
	/* the proc root is optional for discovery (vendor files, safety checks) */
	s->proc_fd = open_root(roots->proc);
	if (s->proc_fd < 0)
		scan_warn(s, "%s: %s; NVIDIA proc files, boot id and safety checks unavailable",
			  roots->proc, strerror(-s->proc_fd));

	r = pci_enumerate(s);
	if (r < 0)
		goto fail;
	topology_resolve(s);
	pci_functions_read(s);
	class_net_scan(s);
	class_infiniband_scan(s);
	class_drm_scan(s);
	class_fpga_scan(s);
	safety_mark(s);

	if (s->dropped_warnings)
		scan_warn(s, "%zu more warnings not shown", s->dropped_warnings);
	const struct dralet_pci_func **list = arena_alloc(s->arena, (s->n_funcs + 1) * sizeof(*list));
	if (!list) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < s->n_funcs; i++)
		list[i] = &s->funcs[i];
	scan->funcs = list;
	scan->n_funcs = s->n_funcs;
	scan->warnings = s->warnings;
	scan->n_warnings = s->n_warnings;
	scan->host_net_problem = s->host_net_problem;
	scan->priv = s;
	if (s->sys_fd >= 0)
		close(s->sys_fd);
	if (s->proc_fd >= 0)
		close(s->proc_fd);
	s->sys_fd = s->proc_fd = -1;
	*ret_scan = scan;
	return 0;
fail:
	if (s->sys_fd >= 0)
		close(s->sys_fd);
	if (s->proc_fd >= 0)
		close(s->proc_fd);
	pthread_mutex_destroy(&s->warn_lock);
	arena_free(s->arena);
	free(s);
	return r;
}

void hal_scan_free(struct hal_scan *scan)
{
	struct hal_scan_private *s;

	if (!scan)
		return;
	s = scan->priv;
	pthread_mutex_destroy(&s->warn_lock);
	arena_free(s->arena);
	free(s);
}

const struct dralet_pci_func *hal_scan_find(const struct hal_scan *scan, const char *address)
{
	return scan_find(scan->priv, address);
}
