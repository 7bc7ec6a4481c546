/* SPDX-License-Identifier: Apache-2.0 */
/*
 * FPGAs: the generic fpga_manager and fpga_region classes, Intel DFL FME and
 * port platform devices (linux-devices.md 5.1, 5.2) and AMD/Xilinx XRT shell
 * files on Alveo functions (5.3).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hal/class.h"

static const char *read_string(struct hal_scan_private *s, int fd, const char *name)
{
	char buf[512];
	return sysfs_read(fd, name, buf, sizeof(buf)) > 0 ? arena_strdup(s->arena, buf) : NULL;
}

/* Multi-line status ("reconfig CRC error\n...") joined with ", ". */
static const char *read_lines(struct hal_scan_private *s, int fd, const char *name)
{
	char buf[1024];

	if (sysfs_read(fd, name, buf, sizeof(buf)) <= 0)
		return NULL;
	for (char *nl; (nl = strchr(buf, '\n'));) {
		size_t len = strlen(buf);
		if (len + 2 >= sizeof(buf))
			break;
		memmove(nl + 2, nl + 1, len - (size_t)(nl - buf));
		nl[0] = ',';
		nl[1] = ' ';
	}
	return arena_strdup(s->arena, buf);
}

static void on_manager(struct hal_scan_private *s, const char *name, int fd, const char *path,
		       void *userdata)
{
	struct dralet_pci_func *f = scan_owner_of_path(s, path);
	struct dralet_fpga_manager *m;

	(void)userdata;
	if (!f || !(m = scan_append(s, (const void **)&f->fpga_managers, &f->n_fpga_managers,
				    sizeof(*m))))
		return;
	m->name = arena_strdup(s->arena, name);
	m->driver_name = read_string(s, fd, "name");
	m->state = read_string(s, fd, "state");
	m->status = read_lines(s, fd, "status");
}

static void on_region(struct hal_scan_private *s, const char *name, int fd, const char *path,
		      void *userdata)
{
	struct dralet_pci_func *f = scan_owner_of_path(s, path);
	struct dralet_fpga_region *r;

	(void)userdata;
	if (!f || !(r = scan_append(s, (const void **)&f->fpga_regions, &f->n_fpga_regions,
				    sizeof(*r))))
		return;
	r->name = arena_strdup(s->arena, name);
	r->compat_id = read_string(s, fd, "compat_id");
}

/* The FME's PR region: dfl-fme.N/dfl-fme-region.M/fpga_region/regionK/compat_id */
static const char *fme_interface_id(struct hal_scan_private *s, int fme_fd)
{
	const char *found = NULL;
	struct dirent *de;
	int dfd = openat(fme_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	while (!found && (de = readdir(dir))) {
		char sub[512];
		if (strncmp(de->d_name, "dfl-fme-region.", 15))
			continue;
		snprintf(sub, sizeof(sub), "%s/fpga_region", de->d_name);
		int rfd = openat(dirfd(dir), sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *rdir = rfd >= 0 ? fdopendir(rfd) : NULL;
		if (!rdir) {
			if (rfd >= 0)
				close(rfd);
			continue;
		}
		struct dirent *re;
		while (!found && (re = readdir(rdir))) {
			char file[512];
			if (strncmp(re->d_name, "region", 6))
				continue;
			snprintf(file, sizeof(file), "%s/compat_id", re->d_name);
			found = read_string(s, dirfd(rdir), file);
		}
		closedir(rdir);
	}
	closedir(dir);
	return found;
}

static void on_dfl(struct hal_scan_private *s, const char *name, int fd, const char *path,
		   void *userdata)
{
	struct dralet_pci_func *f;
	int64_t v;

	(void)userdata;
	if (strncmp(name, "dfl-fme.", 8) && strncmp(name, "dfl-port.", 9))
		return;
	f = scan_owner_of_path(s, path);
	if (!f)
		return;
	if (!strncmp(name, "dfl-fme.", 8)) {
		struct dralet_dfl_fme *m = scan_append(s, (const void **)&f->dfl_fmes, &f->n_dfl_fmes,
						    sizeof(*m));
		if (!m)
			return;
		m->name = arena_strdup(s->arena, name);
		scan_devnode(s, fd, "dev", name, &m->node);
		m->bitstream_id = read_string(s, fd, "bitstream_id");
		m->bitstream_metadata = read_string(s, fd, "bitstream_metadata");
		m->ports_num = sysfs_read_int(fd, "ports_num", &v) == 0 ? (int)v : -1;
		m->socket_id = sysfs_read_int(fd, "socket_id", &v) == 0 ? (int)v : -1;
		m->interface_id = fme_interface_id(s, fd);
	} else {
		struct dralet_dfl_port *p = scan_append(s, (const void **)&f->dfl_ports,
						     &f->n_dfl_ports, sizeof(*p));
		if (!p)
			return;
		p->name = arena_strdup(s->arena, name);
		scan_devnode(s, fd, "dev", name, &p->node);
		p->afu_id = read_string(s, fd, "afu_id");
		p->id = sysfs_read_int(fd, "id", &v) == 0 ? (int)v : -1;
	}
}

/* First entry of @dirfd whose name starts with @prefix, then "/<file>". */
static const char *read_in_prefixed_dir(struct hal_scan_private *s, int dirfd_,
					const char *prefix, const char *file)
{
	const char *found = NULL;
	struct dirent *de;
	int dfd = openat(dirfd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	while (!found && (de = readdir(dir))) {
		char path[512];
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", de->d_name, file);
		found = read_string(s, dirfd(dir), path);
	}
	closedir(dir);
	return found;
}

/* First or last line of a file holding one UUID per line. */
static const char *uuid_line(struct hal_scan_private *s, int fd, const char *name, bool last)
{
	char buf[512], *line = buf;

	if (sysfs_read(fd, name, buf, sizeof(buf)) <= 0)
		return NULL;
	if (last && strrchr(buf, '\n'))
		line = strrchr(buf, '\n') + 1;
	line[strcspn(line, "\n ")] = '\0';
	return line[0] ? arena_strdup(s->arena, line) : NULL;
}

/* Vendors whose cards run XRT shells (Xilinx, Advantech, AWS, Arista). */
static bool xrt_vendor(uint16_t vendor)
{
	return vendor == 0x10ee || vendor == 0x13fe || vendor == 0x1d0f || vendor == 0x3475;
}

static void read_xrt(struct hal_scan_private *s, struct dralet_pci_func *f)
{
	struct dralet_xrt *x;
	int64_t v;
	int fd;
	bool user, mgmt;

	if (!xrt_vendor(f->vendor_id))
		return;
	fd = openat(s->sys_fd, f->sysfs_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	user = faccessat(fd, "user_pf", F_OK, 0) == 0;
	mgmt = faccessat(fd, "mgmt_pf", F_OK, 0) == 0;
	if ((user || mgmt) && (x = arena_alloc(s->arena, sizeof(*x)))) {
		x->user_pf = user;
		x->mgmt_pf = mgmt;
		x->instance = sysfs_read_int(fd, "instance", &v) == 0 ? (int)v : -1;
		x->vbnv = read_in_prefixed_dir(s, fd, "rom.", "VBNV");
		x->timestamp = read_in_prefixed_dir(s, fd, "rom.", "timestamp");
		x->xclbin_uuid = read_string(s, fd, "xclbinuuid");
		/* two-stage shells list the base (BLP) first and the shell (PLP) last;
		 * a user image must match the shell's */
		x->interface_uuid = uuid_line(s, fd, "interface_uuids", true);
		x->logic_uuid = uuid_line(s, fd, "logic_uuids", false);
		x->serial = read_in_prefixed_dir(s, fd, "xmc.", "serial_num");
		f->xrt = x;
	}
	close(fd);
}

void class_fpga_scan(struct hal_scan_private *s)
{
	static const char *const dfl_devices[] = { "dfl-fme.", "dfl-port.", NULL };

	class_for_each(s, "class/fpga_manager", NULL, on_manager, NULL);
	class_for_each(s, "class/fpga_region", NULL, on_region, NULL);
	class_for_each(s, "bus/platform/devices", dfl_devices, on_dfl, NULL);
	for (size_t i = 0; i < s->n_funcs; i++)
		read_xrt(s, &s->funcs[i]);
}
