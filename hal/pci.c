/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCI enumeration: the function list comes from bus/pci/devices (validated
 * entry by entry, so one bad entry cannot abort the scan the way libpci's
 * own bus scan would), and each function's identity, class, revision,
 * subsystem, NUMA node and names come from libpci with the sysfs access
 * method forced and sysfs.path taken from the root.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pci/pci.h>

#include "hal/pci_names.h"
#include "hal/scan_internal.h"

/*
 * libpci reports errors through callbacks without a context pointer and
 * declares the error callback as never returning, so the only way to keep a
 * broken file from exiting the process is a longjmp back into the scan. The
 * jump buffer and the scan being reported on are per thread for that reason.
 */
static _Thread_local jmp_buf *pci_error_jump;
static _Thread_local struct hal_scan_private *pci_warn_scan;

static void pci_on_error(char *msg, ...) __attribute__((noreturn));
static void pci_on_error(char *msg, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, msg);
	vsnprintf(buf, sizeof(buf), msg, ap);
	va_end(ap);
	if (pci_warn_scan)
		scan_warn(pci_warn_scan, "libpci: %s", buf);
	if (pci_error_jump)
		longjmp(*pci_error_jump, 1);
	abort();	/* unreachable: libpci is only called inside a guarded region */
}

static void pci_on_warning(char *msg, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, msg);
	vsnprintf(buf, sizeof(buf), msg, ap);
	va_end(ap);
	if (pci_warn_scan)
		scan_warn(pci_warn_scan, "libpci: %s", buf);
}

static void pci_on_debug(char *msg, ...)
{
	(void)msg;
}

struct entry {
	char address[24];
	const char *path;	/* below the sysfs root, in the arena */
};

static int compare_entries(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->address, ((const struct entry *)b)->address);
}

/* Lists bus/pci/devices. Returns the number of entries (*ret_entries
 * malloc'd) or -errno when the directory exists but cannot be read. */
static int list_functions(struct hal_scan_private *s, struct entry **ret_entries)
{
	struct entry *entries = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;
	int fd = openat(s->sys_fd, "bus/pci/devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT) {
			scan_warn(s, "%s/bus/pci/devices: does not exist; no PCI functions",
				  s->roots.sys);
			*ret_entries = NULL;
			return 0;
		}
		return -errno;
	}
	dir = fdopendir(fd);
	if (!dir) {
		int r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(dir))) {
		char target[4096], path[4096];
		unsigned d, b, v, f;

		if (de->d_name[0] == '.')
			continue;
		if (!hal_parse_address(de->d_name, &d, &b, &v, &f)) {
			scan_warn(s, "%s/bus/pci/devices/%s: not a PCI address; entry skipped",
				  s->roots.sys, de->d_name);
			continue;
		}
		if (sysfs_readlink(dirfd(dir), de->d_name, target, sizeof(target)) < 0 ||
		    sysfs_resolve_link("bus/pci/devices", target, path, sizeof(path)) < 0 ||
		    strncmp(path, "devices/pci", 11) ||
		    strcmp(path_basename(path), de->d_name)) {
			scan_warn(s, "%s/bus/pci/devices/%s: not a link into devices/pci*; entry skipped",
				  s->roots.sys, de->d_name);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct entry *grown = realloc(entries, cap * sizeof(*entries));
			if (!grown) {
				free(entries);
				closedir(dir);
				return -ENOMEM;
			}
			entries = grown;
		}
		for (size_t i = 0; de->d_name[i]; i++)
			entries[n].address[i] = (char)((de->d_name[i] >= 'A' && de->d_name[i] <= 'F')
						       ? de->d_name[i] + 32 : de->d_name[i]);
		entries[n].address[strlen(de->d_name)] = '\0';
		entries[n].path = arena_strdup(s->arena, path);
		if (!entries[n].path) {
			free(entries);
			closedir(dir);
			return -ENOMEM;
		}
		n++;
	}
	closedir(dir);
	if (n)
		qsort(entries, n, sizeof(*entries), compare_entries);
	*ret_entries = entries;
	return (int)n;
}

/*
 * libpci treats a missing identity file as fatal (our error handler turns
 * that into "skip the function") and parses garbage as 0. Values that are
 * never valid (vendor 0 or 0xffff) are read again here to tell a garbage file
 * from a real answer, so the warning can name the file.
 */
static bool identity_plausible(struct hal_scan_private *s, const struct entry *e,
			       const struct pci_dev *d)
{
	char path[4200];
	uint64_t v;

	if (d->vendor_id != 0 && d->vendor_id != 0xffff)
		return true;
	snprintf(path, sizeof(path), "%s/vendor", e->path);
	int r = sysfs_read_u64(s->sys_fd, path, 16, &v);
	scan_warn(s, "%s/%s: %s; function skipped", s->roots.sys, path,
		  r < 0 ? strerror(-r) : "not a vendor id");
	return false;
}

static void fill_function(struct hal_scan_private *s, const struct entry *e,
			  struct dralet_pci_func *f, struct pci_dev *d)
{
	memcpy(f->address, e->address, sizeof(f->address));
	hal_parse_address(e->address, &f->domain, &f->bus, &f->dev, &f->fn);
	f->sysfs_path = e->path;
	f->vendor_id = d->vendor_id;
	f->device_id = d->device_id;
	f->subsystem_vendor_id = d->subsys_vendor_id;
	f->subsystem_device_id = d->subsys_id;
	f->class_code = ((uint32_t)d->device_class << 8) | d->prog_if;
	f->revision = d->rev_id;
	f->numa_node = d->numa_node < 0 ? -1 : d->numa_node;
	f->iommu_group = -1;
	f->vf_index = -1;
}

/* A pci_access reading below the scan's sysfs root, with our handlers. */
static struct pci_access *new_access(struct hal_scan_private *s)
{
	char sysfs_path[4096];
	struct pci_access *pacc = pci_alloc();

	if (!pacc)
		return NULL;
	pacc->error = pci_on_error;
	pacc->warning = pci_on_warning;
	pacc->debug = pci_on_debug;
	pacc->method = PCI_ACCESS_SYS_BUS_PCI;
	hal_root_path(s->roots.sys, "bus/pci", sysfs_path, sizeof(sysfs_path));
	pci_set_param(pacc, "sysfs.path", sysfs_path);
	if (s->opts->pci_ids) {
		pci_set_param(pacc, "hwdb.disable", "1");
		pci_set_name_list_path(pacc, (char *)s->opts->pci_ids, 0);
	}
	return pacc;
}

/* pci_init behind the error jump; false when libpci refused. */
static __attribute__((noinline)) bool init_access(struct hal_scan_private *s,
						  struct pci_access *pacc)
{
	jmp_buf jump;

	pci_error_jump = &jump;
	if (setjmp(jump)) {
		scan_warn(s, "%s: libpci could not be initialised", s->roots.sys);
		pci_error_jump = NULL;
		return false;
	}
	pci_init(pacc);
	pci_error_jump = NULL;
	return true;
}

/* Fills s->funcs[i] for the entries in [begin, end) through libpci, setting
 * kept[i] for those it could read. Kept apart so that nothing else lives
 * across its setjmp points. */
static __attribute__((noinline)) void fill_range(struct hal_scan_private *s,
						 struct pci_access *pacc,
						 const struct entry *entries, size_t begin,
						 size_t end, bool *kept)
{
	jmp_buf jump;

	pci_error_jump = &jump;
	for (volatile size_t i = begin; i < end; i++) {
		struct pci_dev *volatile d = NULL;
		unsigned dom, bus, dev, fn;

		if (setjmp(jump)) {
			scan_warn(s, "%s/%s: libpci could not read it; function skipped", s->roots.sys,
				  entries[i].path);
			if (d)
				pci_free_dev(d);
			continue;
		}
		hal_parse_address(entries[i].address, &dom, &bus, &dev, &fn);
		d = pci_get_dev(pacc, (int)dom, (int)bus, (int)dev, (int)fn);
		pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_CLASS_EXT |
				 PCI_FILL_SUBSYS | PCI_FILL_NUMA_NODE);
		if (identity_plausible(s, &entries[i], d)) {
			fill_function(s, &entries[i], &s->funcs[i], d);
			kept[i] = true;
		}
		pci_free_dev(d);
	}
	pci_error_jump = NULL;
}

struct fill_job {
	const struct entry *entries;
	bool *kept;
};

/* One thread's share: its own pci_access (libpci keeps per-access state). */
static void fill_share(struct hal_scan_private *s, size_t begin, size_t end, void *userdata)
{
	struct fill_job *job = userdata;
	struct pci_access *pacc = new_access(s);

	if (!pacc) {
		scan_warn(s, "%s: out of memory for libpci", s->roots.sys);
		return;
	}
	pci_warn_scan = s;
	if (init_access(s, pacc))
		fill_range(s, pacc, job->entries, begin, end, job->kept);
	pci_cleanup(pacc);
	pci_warn_scan = NULL;
}

static void fill_names(struct hal_scan_private *s)
{
	struct pci_access *pacc = new_access(s);
	struct pci_names *names = NULL;
	char buf[256];

	pci_warn_scan = s;
	if (pacc && init_access(s, pacc))
		names = pci_names_open(pacc, s->opts->pci_ids);
	for (size_t i = 0; names && i < s->n_funcs; i++) {
		struct dralet_pci_func *f = &s->funcs[i];
		f->vendor_name = arena_strdup(s->arena, pci_names_vendor(names, f->vendor_id, buf,
									sizeof(buf)));
		f->device_name = arena_strdup(s->arena, pci_names_device(names, f->vendor_id,
									f->device_id, buf,
									sizeof(buf)));
	}
	pci_names_close(names);
	if (pacc)
		pci_cleanup(pacc);
	pci_warn_scan = NULL;
}

int pci_enumerate(struct hal_scan_private *s)
{
	struct entry *entries = NULL;
	bool *kept;
	int n = list_functions(s, &entries);

	if (n <= 0)
		return n;
	s->funcs = arena_alloc(s->arena, (size_t)n * sizeof(*s->funcs));
	kept = calloc((size_t)n, sizeof(*kept));
	if (!s->funcs || !kept) {
		free(kept);
		free(entries);
		return -ENOMEM;
	}
	struct fill_job job = { entries, kept };
	scan_parallel(s, (size_t)n, fill_share, &job);
	/* keep the address order, without the functions libpci could not read */
	size_t k = 0;
	for (size_t i = 0; i < (size_t)n; i++)
		if (kept[i]) {
			if (k != i)
				s->funcs[k] = s->funcs[i];
			k++;
		}
	s->n_funcs = k;
	free(kept);
	free(entries);
	if (!s->opts->no_names)
		fill_names(s);
	return 0;
}
