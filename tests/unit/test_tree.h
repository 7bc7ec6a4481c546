/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Changing a test node's tree after it was built from a board snippet
 * (board_snippet.h): t_write and t_bind play the kernel or a vendor driver at
 * run time (a link going down, a function rebound, garbage in a file). The
 * other pieces build what the board format does not express; they remain for
 * one user only: test_fpga.c (a DFL port on a VF). Everything is laid out
 * like the kernel does (linux-devices.md 1-5), all links relative.
 * Header-only (static helpers) so each test program stays one file.
 */
#ifndef DRALET_TEST_TREE_H
#define DRALET_TEST_TREE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Paths in these builders are short; truncation cannot happen in practice. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* "../" once per component of @path (a directory below sys/). */
static inline void t_ups(const char *path, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const char *p = path; *p; p++)
		if (*p == '/' && o + 3 < size) {
			memcpy(buf + o, "../", 4);
			o += 3;
		}
	if (o + 3 < size)
		memcpy(buf + o, "../", 4);
}

/* sys path of a function below @parent ("pci0000:00/0000:00:01.0"). */
static inline void t_fn(const char *parent, const char *addr, char *buf, size_t size)
{
	snprintf(buf, size, "devices/%s/%s", parent, addr);
}

/* Writes <function dir>/@rel (a trailing newline is added when missing). */
static inline void t_write(const char *d, const char *parent, const char *addr, const char *rel,
			   const char *content)
{
	char p[1024];
	snprintf(p, sizeof(p), "sys/devices/%s/%s/%s", parent, addr, rel);
	tree_write(d, p, content);
}

/* A link below sys/ at @rel pointing to sys/@target (both below sys/). */
static inline void t_syslink(const char *d, const char *rel, const char *target)
{
	char dir[1024], ups[512], t[2048], p[1024];
	const char *slash = strrchr(rel, '/');

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
	t_ups(dir, ups, sizeof(ups));
	snprintf(t, sizeof(t), "%s%s", ups, target);
	snprintf(p, sizeof(p), "sys/%s", rel);
	tree_link(d, p, t);
}

/* Binds the function to @driver (its driver link), or unbinds it (NULL). */
static inline void t_bind(const char *d, const char *parent, const char *addr,
			  const char *driver)
{
	char fn[512], rel[1024], drv[256], path[2048];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(rel, sizeof(rel), "%s/driver", fn);
	snprintf(path, sizeof(path), "%s/sys/%s", d, rel);
	unlink(path);
	if (!driver)
		return;
	snprintf(drv, sizeof(drv), "sys/bus/pci/drivers/%s", driver);
	tree_mkdir(d, drv);
	snprintf(drv, sizeof(drv), "bus/pci/drivers/%s", driver);
	t_syslink(d, rel, drv);
}

static inline void t_group(const char *d, const char *parent, const char *addr, int group)
{
	char fn[512], rel[1024], target[256];

	t_fn(parent, addr, fn, sizeof(fn));
	snprintf(target, sizeof(target), "kernel/iommu_groups/%d", group);
	snprintf(rel, sizeof(rel), "%s/iommu_group", fn);
	t_syslink(d, rel, target);
	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices/%s", group, addr);
	t_syslink(d, rel, fn);
}

static inline void t_vf(const char *d, const char *parent, const char *pf, const char *vf,
			int index)
{
	char rel[1024], target[64];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/virtfn%d", parent, pf, index);
	snprintf(target, sizeof(target), "../%s", vf);
	tree_link(d, rel, target);
	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/physfn", parent, vf);
	snprintf(target, sizeof(target), "../%s", pf);
	tree_link(d, rel, target);
}

/* A device node placeholder in dev/ plus a "dev" file with its numbers. */
static inline void t_node(const char *d, const char *dev_path)
{
	char p[512];
	snprintf(p, sizeof(p), "dev/%s", dev_path);
	tree_write(d, p, "");
}

#endif
