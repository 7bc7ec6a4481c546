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
 * Debian and RHEL directories, else in the directories the root's
 * ld.so.conf adds (a driver installed outside them, as on GKE:
 * /usr/local/nvidia/lib64, with only soname links in /usr/lib), where a file
 * counts only when it is an ELF object of this machine (not the i386 copy).
 * Each is mounted at the same path in the container, once more at its soname
 * ("libcuda.so.1") so that the loader finds it without an ldconfig hook when
 * the image searches that directory. What is not there is skipped.
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

/* Mounts <dir>/<name> of the driver root at the same path, and at
 * <dir>/<also_as> when given. */
static int mount_file(const struct nvidia_state *st, struct dralet_edits *edits, const char *dir,
		      const char *name, const char *also_as)
{
	char rel[512], host[4096], container[600];
	int r;

	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	if ((r = join(st->host_driver_root, rel, host, sizeof(host))) < 0)
		return r;
	snprintf(container, sizeof(container), "/%s", rel);
	if ((r = dralet_edits_add_mount(edits, host, container, "ro,nosuid,nodev,bind")) < 0)
		return r;
	if (also_as) {
		snprintf(container, sizeof(container), "/%s/%s", dir, also_as);
		r = dralet_edits_add_mount(edits, host, container, "ro,nosuid,nodev,bind");
	}
	return r < 0 ? r : 0;
}

struct lib_dirs {
	char conf[CONF_DIRS_MAX][LD_SO_CONF_DIR_MAX];
	size_t n_conf;
	bool conf_read;
};

/* The directory below the driver root that holds library @name: the first
 * standard one that has it, else the first of ld.so.conf's with an ELF
 * object of this machine (read once per @dirs); NULL when none does. */
static const char *lib_dir_of(const struct nvidia_state *st, struct lib_dirs *dirs,
			      const char *name, char *local, size_t size)
{
	for (size_t d = 0; lib_dirs[d]; d++)
		if (has_file(st, lib_dirs[d], name, false, local, size))
			return lib_dirs[d];
	if (!dirs->conf_read) {
		dirs->n_conf = ld_so_conf_dirs(st->driver_root, dirs->conf, CONF_DIRS_MAX);
		dirs->conf_read = true;
	}
	for (size_t d = 0; d < dirs->n_conf; d++)
		if (has_file(st, dirs->conf[d], name, true, local, size))
			return dirs->conf[d];
	return NULL;
}

bool nvidia_driver_lib(const struct nvidia_state *st, const char *stem, char *path, size_t size)
{
	const char *version = nvidia_driver_version(st);
	struct lib_dirs *dirs = calloc(1, sizeof(*dirs));
	char name[128];
	bool found;

	if (!dirs)
		return false;
	snprintf(name, sizeof(name), "%s.so.%s", stem, version);
	found = version[0] && lib_dir_of(st, dirs, name, path, size);
	free(dirs);
	return found;
}

int nvidia_add_driver_mounts(struct dralet_backend_ctx *ctx, const struct nvidia_state *st,
			     struct dralet_edits *edits)
{
	const char *version = nvidia_driver_version(st), *dir;
	struct lib_dirs *dirs = calloc(1, sizeof(*dirs));
	char name[128], soname[128], local[4096];
	int r = 0;

	(void)ctx;
	if (!dirs)
		return -ENOMEM;
	for (size_t i = 0; version[0] && !r && i < sizeof(driver_libs) / sizeof(*driver_libs); i++) {
		snprintf(name, sizeof(name), "%s.so.%s", driver_libs[i].stem, version);
		if (driver_libs[i].soname)
			snprintf(soname, sizeof(soname), "%s.so.%s", driver_libs[i].stem,
				 driver_libs[i].soname);
		if ((dir = lib_dir_of(st, dirs, name, local, sizeof(local))))
			r = mount_file(st, edits, dir, name, driver_libs[i].soname ? soname : NULL);
	}
	free(dirs);
	for (size_t t = 0; driver_tools[t] && !r; t++)
		for (size_t d = 0; bin_dirs[d]; d++)
			if (has_file(st, bin_dirs[d], driver_tools[t], false, local, sizeof(local))) {
				r = mount_file(st, edits, bin_dirs[d], driver_tools[t], NULL);
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
