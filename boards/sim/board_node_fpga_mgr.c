/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel model's fpga_manager (board_node_ops.h): the Xilinx kernel's
 * firmware/flags attributes (Xilinx/linux-xlnx drivers/fpga/fpga-mgr.c
 * firmware_store: the image is requested from the firmware search path,
 * written, and the write fails with the load's error) and device-tree
 * overlays through configfs (drivers/of/configfs.c: mkdir an item, write a
 * .dtbo's name to its path; a failed apply still answers the write, status
 * reads "unapplied"), whose fpga-region names its image in firmware-name.
 * The simulated FPGA takes any image of 16 bytes or more; a shorter one is
 * refused ("write error", status "reconfig incompatible image").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boards/sim/board_node.h"

#define OVERLAYS "kernel/config/device-tree/overlays"

static void set_attr(struct board_node *bn, const char *manager, const char *attr,
		     const char *value)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "class/fpga_manager/%s/%s", manager, attr);
	bn->real.write(bn->real.userdata, rel, value);
}

/* <firmware dir>/@name as the kernel finds it: firmware_class's path
 * parameter in the tree (the model has no /lib/firmware of its own). */
static int firmware_file(struct board_node *bn, const char *name, char *path, size_t size)
{
	char dir[PATH_MAX];

	if (!name || !*name || strchr(name, '/') ||
	    bn->real.read(bn->real.userdata, "module/firmware_class/parameters/path", dir,
			  sizeof(dir)) <= 0 || dir[0] != '/')
		return -ENOENT;
	snprintf(path, size, "%s/%s", dir, name);
	return 0;
}

/* request_firmware(), then the simulated FPGA's write; the state follows. */
static int load_image(struct board_node *bn, const char *manager, const char *image)
{
	char path[PATH_MAX + 256];
	struct stat st;

	set_attr(bn, manager, "state", "firmware request\n");
	if (firmware_file(bn, image, path, sizeof(path)) < 0 || stat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		set_attr(bn, manager, "state", "firmware request error\n");
		return -ENOENT;
	}
	if (st.st_size < 16) {
		set_attr(bn, manager, "state", "write error\n");
		set_attr(bn, manager, "status", "reconfig incompatible image\n");
		return -EIO;
	}
	set_attr(bn, manager, "status", "");
	set_attr(bn, manager, "state", "operating\n");
	bn->fpga_programs++;
	bn->fpga_last_size = (size_t)st.st_size;
	return 0;
}

int bn_fpga_mgr_load(struct board_node *bn, const char *manager, unsigned long flags,
		     const char *image)
{
	char rel[256], value[32];
	int r;

	if (!manager || !*manager || strchr(manager, '/'))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "class/fpga_manager/%s", manager);
	if (faccessat(bn->sysfd, rel, F_OK, 0) < 0)
		return -ENODEV;
	snprintf(rel, sizeof(rel), "class/fpga_manager/%s/firmware", manager);
	if (faccessat(bn->sysfd, rel, F_OK, 0) < 0)
		return -ENOENT;	/* a kernel without the attribute: open() fails */
	snprintf(rel, sizeof(rel), "class/fpga_manager/%s/flags", manager);
	snprintf(value, sizeof(value), "%lx\n", flags);
	if ((r = bn->real.write(bn->real.userdata, rel, value)) < 0)
		return r;
	return load_image(bn, manager, image);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The first firmware-name property of a flattened device tree (the
 * Devicetree Specification's DTB format: magic 0xd00dfeed, off_dt_struct
 * at 8, off_dt_strings at 12, size_dt_strings at 32, size_dt_struct at 36;
 * tokens BEGIN_NODE 1, END_NODE 2, PROP 3 (len, nameoff, value), NOP 4,
 * END 9, each 4-byte aligned). */
static bool fdt_firmware_name(const uint8_t *b, size_t n, char *out, size_t size)
{
	uint32_t off, strings, nstrings, end;

	if (n < 40 || be32(b) != 0xd00dfeed)
		return false;
	off = be32(b + 8);
	strings = be32(b + 12);
	nstrings = be32(b + 32);
	end = off + be32(b + 36);
	if (end < off || end > n || strings > n || nstrings > n - strings)
		return false;
	while (off + 4 <= end) {
		uint32_t tok = be32(b + off);
		off += 4;
		if (tok == 1) {	/* BEGIN_NODE: a NUL-terminated name, padded */
			const uint8_t *z = memchr(b + off, 0, end - off);
			if (!z)
				return false;
			off = ((uint32_t)(z - b) + 4) & ~3u;
		} else if (tok == 3) {
			if (off + 8 > end)
				return false;
			uint32_t len = be32(b + off), name = be32(b + off + 4);
			off += 8;
			if (len > end - off || name >= nstrings)
				return false;
			const char *pn = (const char *)b + strings + name;
			if (memchr(pn, 0, nstrings - name) && !strcmp(pn, "firmware-name") &&
			    len > 1 && len < size && b[off + len - 1] == 0) {
				memcpy(out, b + off, len);
				return true;
			}
			off = (off + len + 3) & ~3u;
		} else if (tok == 9) {
			return false;
		} else if (tok != 2 && tok != 4) {
			return false;
		}
	}
	return false;
}

/* The board's first SoC FPGA manager: the one an overlay's region uses. */
static const char *soc_manager(const struct board_node *bn)
{
	for (size_t i = 0; i < bn->b.n_platform; i++)
		if (bn->b.platform[i].n_fpga_mgr)
			return bn->b.platform[i].fpga_mgr[0].name;
	return NULL;
}

static int apply(struct board_node *bn, const char *dtbo)
{
	char path[PATH_MAX + 256], fw[256];
	uint8_t buf[65536];
	ssize_t n;
	int fd;
	const char *manager = soc_manager(bn);

	if (firmware_file(bn, dtbo, path, sizeof(path)) < 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -ENOENT;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || !fdt_firmware_name(buf, (size_t)n, fw, sizeof(fw)) || !manager)
		return -EINVAL;
	return load_image(bn, manager, fw);
}

/* A configfs item's attribute file (configfs makes them with the item). */
static void item_attr(struct board_node *bn, const char *rel, const char *value)
{
	int fd = openat(bn->sysfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return;
	if (write(fd, value, strlen(value)) < 0) {
		/* the item then reads empty, as an unapplied one's path does */
	}
	close(fd);
}

int bn_fpga_overlay(struct board_node *bn, const char *name, const char *dtbo)
{
	char rel[256], file[300];

	if (!name || !*name || strchr(name, '/') || (dtbo && (!*dtbo || strchr(dtbo, '/'))))
		return -EINVAL;
	if (faccessat(bn->sysfd, OVERLAYS, F_OK, 0) < 0)
		return -ENOENT;
	snprintf(rel, sizeof(rel), OVERLAYS "/%s", name);
	if (!dtbo) {	/* rmdir: the overlay goes with the item */
		snprintf(file, sizeof(file), "%s/path", rel);
		unlinkat(bn->sysfd, file, 0);
		snprintf(file, sizeof(file), "%s/status", rel);
		unlinkat(bn->sysfd, file, 0);
		return unlinkat(bn->sysfd, rel, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
	}
	if (mkdirat(bn->sysfd, rel, 0755) < 0)
		return -errno;
	snprintf(file, sizeof(file), "%s/path", rel);
	item_attr(bn, file, dtbo);
	snprintf(file, sizeof(file), "%s/status", rel);
	/* configfs answers the path write whether or not the overlay applied */
	item_attr(bn, file, apply(bn, dtbo) == 0 ? "applied\n" : "unapplied\n");
	return 0;
}
