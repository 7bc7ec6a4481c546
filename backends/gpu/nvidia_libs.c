/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NVIDIA driver's user-space half (libcuda, libnvidia-ml ... and
 * nvidia-smi) as read-only bind mounts, and where to find nvidia-smi.
 *
 * Two roots, because dralet may run in a container that sees the host's
 * filesystem somewhere else than the container runtime does:
 *   driverRoot      where dralet looks for the files (default: the directory
 *                   holding the proc root: "/" on a node, "/host" with
 *                   --proc-root /host/proc, the tree of a simulated board);
 *   hostDriverRoot  the same tree as the container runtime sees it, used in
 *                   the mounts' host paths (default "/").
 * Libraries are found as <lib dir>/<name>.so.<driver version> in the usual
 * Debian and RHEL directories, else behind the soname link of such a
 * directory, else in the directories the root's ld.so.conf adds (a driver
 * installed outside them, as on GKE: /usr/local/nvidia/lib64, with only
 * soname links in /usr/lib); found those two ways a file counts only when it
 * is an ELF object of this machine (not the i386 copy). Each is mounted in
 * the directory it was found in, under its versioned name and once more at
 * its soname ("libcuda.so.1"), so that the loader finds it without an
 * ldconfig hook when the image searches that directory. What is not there is
 * skipped.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvidia.h"
#include "../common/ld_so_conf.h"
#include "../common/root_path.h"

#define CONF_DIRS_MAX 32

static const char *const lib_dirs[] = {
	"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib",
	"lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "lib64", "lib", NULL,
};

static const char *const bin_dirs[] = { "usr/bin", "usr/sbin", "bin", "sbin", NULL };

/* library stem and soname suffix (NULL: the versioned name is the soname) */
static const struct {
	const char *stem, *soname;
} driver_libs[] = {
	{ "libcuda", "1" },
	{ "libnvidia-ml", "1" },
	{ "libnvidia-ptxjitcompiler", "1" },
	{ "libnvidia-nvvm", "4" },
	{ "libcudadebugger", "1" },
	{ "libnvidia-opencl", "1" },
	{ "libnvidia-allocator", "1" },
	{ "libnvidia-cfg", "1" },
	{ "libnvidia-gpucomp", NULL },
	{ "libnvidia-pkcs11-openssl3", NULL },
};

static const char *const driver_tools[] = { "nvidia-smi", "nvidia-debugdump", NULL };

/* "<root>/<rel>" without a doubled slash. */
static int join(const char *root, const char *rel, char *buf, size_t size)
{
	size_t n = strlen(root);
	int r = snprintf(buf, size, "%.*s/%s", (int)(n && root[n - 1] == '/' ? n - 1 : n), root, rel);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

void nvidia_roots_init(struct dralet_backend_ctx *ctx, struct nvidia_state *st)
{
	const char *root = dralet_ctx_option(ctx, "driverRoot");
	const char *host = dralet_ctx_option(ctx, "hostDriverRoot");
	char probe[4096];

	snprintf(st->host_driver_root, sizeof(st->host_driver_root), "%s",
		 host && host[0] == '/' ? host : "/");
	if (host && host[0] != '/')
		dralet_ctx_warn(ctx, "option hostDriverRoot \"%s\" is not absolute; using /", host);
	if (root && root[0] == '/') {
		snprintf(st->driver_root, sizeof(st->driver_root), "%s", root);
		return;
	}
	if (root)
		dralet_ctx_warn(ctx, "option driverRoot \"%s\" is not absolute; ignored", root);
	/* the parent of the proc root: "<proc root>/x" minus "/proc/x" */
	if (dralet_root_path(ctx, DRALET_ROOT_PROC, "x", probe, sizeof(probe)) == 0) {
		char *slash;
		probe[strlen(probe) - 2] = '\0';	/* drop "/x" */
		slash = strrchr(probe, '/');
		if (slash && slash != probe)
			*slash = '\0';
		else
			snprintf(probe, sizeof(probe), "/");
		snprintf(st->driver_root, sizeof(st->driver_root), "%s", probe[0] ? probe : "/");
	} else {
		snprintf(st->driver_root, sizeof(st->driver_root), "/");
	}
}

static bool regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* True when @path starts with the ELF header of this machine's objects. */
static bool native_elf(const char *path)
{
	Elf64_Ehdr h;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	     !memcmp(h.e_ident, ELFMAG, SELFMAG) &&
	     h.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
#if defined(__x86_64__)
	     h.e_machine == EM_X86_64;
#elif defined(__aarch64__)
	     h.e_machine == EM_AARCH64;
#else
	     true;
#endif
	close(fd);
	return ok;
}

/* True when <driver root>/<dir>/<name> is a regular file (an ELF object of
 * this machine when @native); its path in @local. */
static bool has_file(const struct nvidia_state *st, const char *dir, const char *name, bool native,
		     char *local, size_t size)
{
	char rel[512];

	return snprintf(rel, sizeof(rel), "%s/%s", dir, name) < (int)sizeof(rel) &&
	       join(st->driver_root, rel, local, size) == 0 && regular_file(local) &&
	       (!native || native_elf(local));
}

/* Mounts @host_rel of the driver root at <dir>/<name> in the container, and
 * at <dir>/<also_as> when given. */
static int mount_file(const struct nvidia_state *st, struct dralet_edits *edits,
		      const char *host_rel, const char *dir, const char *name, const char *also_as)
{
	char host[4096], container[600];
	int r;

	if ((r = join(st->host_driver_root, host_rel, host, sizeof(host))) < 0)
		return r;
	snprintf(container, sizeof(container), "/%s/%s", dir, name);
	if ((r = dralet_edits_add_mount(edits, host, container, "ro,nosuid,nodev,bind")) < 0)
		return r;
	if (also_as) {
		snprintf(container, sizeof(container), "/%s/%s", dir, also_as);
		r = dralet_edits_add_mount(edits, host, container, "ro,nosuid,nodev,bind");
	}
	return r < 0 ? r : 0;
}

/* The directories searched beyond the standard ones, read when first needed. */
struct lib_dirs {
	char conf[CONF_DIRS_MAX][LD_SO_CONF_DIR_MAX];
	size_t n_conf;
	bool conf_read;
};

/* Where library @i of the running driver is: the directory the container
 * gets it in, and the file below the driver root. */
struct lib_place {
	const char *dir;
	char host_rel[512];
};

/* The soname of library @i in @buf ("libcuda.so.1"), or NULL when its
 * versioned name is its soname. */
static const char *soname_of(size_t i, char *buf, size_t size)
{
	if (!driver_libs[i].soname)
		return NULL;
	snprintf(buf, size, "%s.so.%s", driver_libs[i].stem, driver_libs[i].soname);
	return buf;
}

/*
 * Finds <stem>.so.<version> of library @i below the driver root, the first
 * of: in a standard directory; behind the soname link of a standard
 * directory (links followed below the root: /usr/lib/libcuda.so.1 ->
 * /usr/local/nvidia/lib64/libcuda.so.1 -> libcuda.so.580.159.04), an ELF
 * object of this machine; in a directory ld.so.conf names, the same. Its
 * path in @local; false when none has it.
 */
static bool find_lib(const struct nvidia_state *st, struct lib_dirs *dirs, size_t i,
		     const char *version, struct lib_place *out, char *local, size_t size)
{
	char name[128], soname_buf[128], rel[512];
	const char *soname = soname_of(i, soname_buf, sizeof(soname_buf)), *base;

	snprintf(name, sizeof(name), "%s.so.%s", driver_libs[i].stem, version);
	for (size_t d = 0; lib_dirs[d]; d++)
		if (has_file(st, lib_dirs[d], name, false, local, size)) {
			out->dir = lib_dirs[d];
			snprintf(out->host_rel, sizeof(out->host_rel), "%s/%s", lib_dirs[d], name);
			return true;
		}
	for (size_t d = 0; soname && lib_dirs[d]; d++) {
		snprintf(rel, sizeof(rel), "%s/%s", lib_dirs[d], soname);
		if (root_resolve(st->driver_root, rel, out->host_rel, sizeof(out->host_rel)) < 0)
			continue;
		base = strrchr(out->host_rel, '/');
		if (strcmp(base ? base + 1 : out->host_rel, name) ||
		    join(st->driver_root, out->host_rel, local, size) < 0 || !regular_file(local) ||
		    !native_elf(local))
			continue;	/* another driver version's, or not this machine's */
		out->dir = lib_dirs[d];
		return true;
	}
	if (!dirs->conf_read) {
		dirs->n_conf = ld_so_conf_dirs(st->driver_root, dirs->conf, CONF_DIRS_MAX);
		dirs->conf_read = true;
	}
	for (size_t d = 0; d < dirs->n_conf; d++)
		if (has_file(st, dirs->conf[d], name, true, local, size)) {
			out->dir = dirs->conf[d];
			snprintf(out->host_rel, sizeof(out->host_rel), "%s/%s", dirs->conf[d], name);
			return true;
		}
	return false;
}

bool nvidia_driver_lib(const struct nvidia_state *st, const char *stem, char *path, size_t size)
{
	const char *version = nvidia_driver_version(st);
	struct lib_dirs *dirs;
	struct lib_place place;
	bool found = false;

	for (size_t i = 0; version[0] && i < sizeof(driver_libs) / sizeof(*driver_libs); i++) {
		if (strcmp(driver_libs[i].stem, stem))
			continue;
		if (!(dirs = calloc(1, sizeof(*dirs))))
			return false;
		found = find_lib(st, dirs, i, version, &place, path, size);
		free(dirs);
		break;	/* each stem is listed once */
	}
	return found;
}

int nvidia_add_driver_mounts(struct dralet_backend_ctx *ctx, const struct nvidia_state *st,
			     struct dralet_edits *edits)
{
	const char *version = nvidia_driver_version(st);
	struct lib_dirs *dirs = calloc(1, sizeof(*dirs));
	char name[128], soname[128], local[4096];
	struct lib_place place;
	int r = 0;

	(void)ctx;
	if (!dirs)
		return -ENOMEM;
	for (size_t i = 0; version[0] && !r && i < sizeof(driver_libs) / sizeof(*driver_libs); i++) {
		if (!find_lib(st, dirs, i, version, &place, local, sizeof(local)))
			continue;
		snprintf(name, sizeof(name), "%s.so.%s", driver_libs[i].stem, version);
		r = mount_file(st, edits, place.host_rel, place.dir, name,
			       soname_of(i, soname, sizeof(soname)));
	}
	free(dirs);
	for (size_t t = 0; driver_tools[t] && !r; t++)
		for (size_t d = 0; bin_dirs[d]; d++)
			if (has_file(st, bin_dirs[d], driver_tools[t], false, local, sizeof(local))) {
				snprintf(name, sizeof(name), "%s/%s", bin_dirs[d], driver_tools[t]);
				r = mount_file(st, edits, name, bin_dirs[d], driver_tools[t], NULL);
				break;
			}
	return r;
}

bool nvidia_smi_path(struct dralet_backend_ctx *ctx, const struct nvidia_state *st, char *buf,
		     size_t size)
{
	const char *opt = dralet_ctx_option(ctx, "nvidiaSmi");
	char rel[64];

	if (opt) {
		snprintf(buf, size, "%s", opt);
		return gpu_executable(buf);
	}
	for (size_t d = 0; bin_dirs[d]; d++) {
		snprintf(rel, sizeof(rel), "%s/nvidia-smi", bin_dirs[d]);
		if (join(st->driver_root, rel, buf, size) == 0 && gpu_executable(buf))
			return true;
	}
	join(st->driver_root, "usr/bin/nvidia-smi", buf, size);
	return false;
}
