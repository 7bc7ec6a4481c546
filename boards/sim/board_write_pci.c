/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PCI part of the tree: host bridges, one directory per function with
 * the attributes of drivers/pci/pci-sysfs.c and iov.c in their kernel
 * formats, config space, bus/pci (devices, drivers, slots), pci_bus class
 * devices and IOMMU groups.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boards/sim/board_write.h"

/* include/linux/ioport.h */
#define IORESOURCE_MEM 0x00000200u
#define IORESOURCE_PREFETCH 0x00002000u
#define IORESOURCE_SIZEALIGN 0x00040000u
#define IORESOURCE_MEM_64 0x00100000u

static unsigned speed_code(unsigned mts)
{
	switch (mts) {
	case 2500: return 1;
	case 5000: return 2;
	case 8000: return 3;
	case 16000: return 4;
	case 32000: return 5;
	case 64000: return 6;
	}
	return 0;
}

static const char *speed_text(unsigned mts)
{
	switch (mts) {
	case 2500: return "2.5 GT/s PCIe";
	case 5000: return "5.0 GT/s PCIe";
	case 8000: return "8.0 GT/s PCIe";
	case 16000: return "16.0 GT/s PCIe";
	case 32000: return "32.0 GT/s PCIe";
	case 64000: return "64.0 GT/s PCIe";
	}
	return "Unknown";
}

static unsigned pcie_type(enum board_port_kind k)
{
	switch (k) {
	case BOARD_ENDPOINT: return 0;
	case BOARD_RCIEP: return 9;
	case BOARD_ROOT_PORT: return 4;
	case BOARD_SWITCH_UP: return 5;
	case BOARD_SWITCH_DOWN: return 6;
	case BOARD_PCI_BRIDGE: return 7;
	}
	return 0;
}

static void put16(uint8_t *c, unsigned off, unsigned v)
{
	c[off] = (uint8_t)v;
	c[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *c, unsigned off, uint32_t v)
{
	put16(c, off, v & 0xffff);
	put16(c, off + 2, v >> 16);
}

static uint32_t bar_flags(const struct board_bar *b)
{
	return (b->is64 ? 0x4u : 0) | (b->prefetch ? 0x8u : 0);
}

/* The first 256 bytes of config space: header, and a PCIe capability with
 * the port type and link so that `lspci -vv` shows them. */
static void build_config(const struct board_func *f, uint8_t c[256])
{
	bool bridge = board_kind_is_bridge(f->kind);
	unsigned cap = 0x40;

	memset(c, 0, 256);
	put16(c, 0x00, f->vendor);
	put16(c, 0x02, f->device);
	put16(c, 0x04, f->driver ? 0x0406 : 0x0002);	/* mem, bus master, INTx off */
	put16(c, 0x06, 0x0010);				/* capability list */
	c[0x08] = f->revision;
	c[0x09] = (uint8_t)f->class_code;
	c[0x0a] = (uint8_t)(f->class_code >> 8);
	c[0x0b] = (uint8_t)(f->class_code >> 16);
	c[0x0e] = (uint8_t)((bridge ? 1 : 0) | (f->multifunction ? 0x80 : 0));
	if (!bridge) {
		for (unsigned s = 0; s < 6; s++) {
			const struct board_bar *b = &f->bars[s];

			if (!b->size)
				continue;
			put32(c, 0x10 + 4 * s, (uint32_t)(b->start & 0xfffffff0u) | bar_flags(b));
			if (b->is64 && s < 5)
				put32(c, 0x10 + 4 * (s + 1), (uint32_t)(b->start >> 32));
		}
		put16(c, 0x2c, f->sub_vendor);
		put16(c, 0x2e, f->sub_device);
	} else {
		c[0x18] = (uint8_t)f->bus;
		c[0x19] = (uint8_t)f->secondary;
		c[0x1a] = (uint8_t)f->subordinate;
		c[0x1c] = 0xf0;	/* no I/O window: base above limit */
		c[0x1d] = 0x00;
		if (f->win_end[0]) {
			put16(c, 0x20, (unsigned)(f->win_start[0] >> 16) & 0xfff0);
			put16(c, 0x22, (unsigned)(f->win_end[0] >> 16) & 0xfff0);
		} else {
			put16(c, 0x20, 0xfff0);
		}
		if (f->win_end[1]) {
			put16(c, 0x24, ((unsigned)(f->win_start[1] >> 16) & 0xfff0) | 1);
			put16(c, 0x26, ((unsigned)(f->win_end[1] >> 16) & 0xfff0) | 1);
			put32(c, 0x28, (uint32_t)(f->win_start[1] >> 32));
			put32(c, 0x2c, (uint32_t)(f->win_end[1] >> 32));
		} else {
			put16(c, 0x24, 0xfff1);
			put16(c, 0x26, 0x0001);
		}
	}
	c[0x34] = (uint8_t)cap;
	c[0x3c] = (uint8_t)(f->irq > 0 ? f->irq : 0xff);
	c[0x3d] = f->irq > 0 ? 1 : 0;

	/* PCI Express capability, version 2 */
	c[cap] = 0x10;
	c[cap + 1] = 0;
	put16(c, cap + 2, 0x0002 | pcie_type(f->kind) << 4);
	put32(c, cap + 4, 0x00000002u | (bridge || f->physfn ? 0 : 1u << 28));	/* 512B, FLR */
	if (!f->physfn) {	/* VF link registers are reserved */
		unsigned maxc = speed_code(f->max_link.mts), curc = speed_code(f->link.mts);

		put32(c, cap + 0x0c, maxc | f->max_link.width << 4 | (uint32_t)f->dev << 24);
		put16(c, cap + 0x12, curc | f->link.width << 4 |
					     (f->kind == BOARD_ROOT_PORT ||
					      f->kind == BOARD_SWITCH_DOWN ? 1u << 13 : 0));
		if (maxc)
			put32(c, cap + 0x2c, ((1u << maxc) - 1) << 1);	/* supported speeds */
		put16(c, cap + 0x30, maxc);
	}
}

static void write_resource(struct bw *w, const struct bw_dir *d, const struct board_func *f)
{
	bool bridge = board_kind_is_bridge(f->kind);
	char buf[17 * 60];
	size_t len = 0;
	int lines = bridge ? 17 : 13;

	for (int i = 0; i < lines; i++) {
		const struct board_bar *b = NULL;
		uint64_t start = 0, end = 0, flags = 0;

		if (i < 6 && !bridge)
			b = &f->bars[i];
		else if (i >= 7 && i < 13 && f->has_sriov)
			b = &f->vf_res[i - 7];
		if (b && b->size) {
			start = b->start;
			end = b->start + b->size - 1;
			flags = IORESOURCE_MEM | IORESOURCE_SIZEALIGN | bar_flags(b) |
				(b->prefetch ? IORESOURCE_PREFETCH : 0) |
				(b->is64 ? IORESOURCE_MEM_64 : 0);
		} else if (bridge && (i == 14 || i == 15) && f->win_end[i - 14]) {
			start = f->win_start[i - 14];
			end = f->win_end[i - 14];
			flags = i == 14 ? IORESOURCE_MEM
					: IORESOURCE_MEM | IORESOURCE_PREFETCH | IORESOURCE_MEM_64;
		}
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"0x%016llx 0x%016llx 0x%016llx\n", (unsigned long long)start,
					(unsigned long long)end, (unsigned long long)flags);
	}
	bw_write(w, d->fd, "resource", buf, len);
}

static void write_aer(struct bw *w, const struct bw_dir *d, const struct board_func *f)
{
	/* short names of drivers/pci/pcie/aer.c in current kernels */
	static const char *const names[3][17] = {
		{ "RxErr", "BadTLP", "BadDLLP", "Rollover", "Timeout", "NonFatalErr", "CorrIntErr",
		  "HeaderOF", NULL },
		{ "Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt",
		  "RxOF", "MalfTLP", "ECRC", "UnsupReq", "ACSViol", "UncorrIntErr", "BlockedTLP",
		  "AtomicOpBlocked", "TLPBlockedErr" },
		{ "Undefined", "DLP", "SDES", "TLP", "FCP", "CmpltTO", "CmpltAbrt", "UnxCmplt",
		  "RxOF", "MalfTLP", "ECRC", "UnsupReq", "ACSViol", "UncorrIntErr", "BlockedTLP",
		  "AtomicOpBlocked", "TLPBlockedErr" },
	};
	static const char *const files[3] = { "aer_dev_correctable", "aer_dev_fatal",
					      "aer_dev_nonfatal" };
	static const char *const totals[3] = { "TOTAL_ERR_COR", "TOTAL_ERR_FATAL",
					       "TOTAL_ERR_NONFATAL" };

	for (int k = 0; k < 3; k++) {
		char buf[1024];
		size_t len = 0;
		unsigned long total = 0;

		for (int i = 0; i < 17 && names[k][i]; i++) {
			unsigned long n = 0;

			for (size_t j = 0; j < f->n_aer[k]; j++)
				if (!strcmp(f->aer[k][j].name, names[k][i]))
					n = f->aer[k][j].count;
			total += n;
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %lu\n", names[k][i], n);
		}
		/* counters the board names that the table lacks */
		for (size_t j = 0; j < f->n_aer[k]; j++) {
			bool known = false;

			for (int i = 0; i < 17 && names[k][i]; i++)
				known |= !strcmp(f->aer[k][j].name, names[k][i]);
			if (!known && len < sizeof(buf) - 64) {
				total += f->aer[k][j].count;
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%.40s %lu\n",
							f->aer[k][j].name, f->aer[k][j].count);
			}
		}
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %lu\n", totals[k], total);
		bw_write(w, d->fd, files[k], buf, len);
	}
	if (f->kind == BOARD_ROOT_PORT) {
		bw_text(w, d->fd, "aer_rootport_total_err_cor", "0\n");
		bw_text(w, d->fd, "aer_rootport_total_err_fatal", "0\n");
		bw_text(w, d->fd, "aer_rootport_total_err_nonfatal", "0\n");
	}
}

static void write_pci_bus(struct bw *w, const struct bw_dir *owner, unsigned domain,
			  unsigned bus, int numa)
{
	struct bw_dir d;
	char name[16], rel[32], cls[48];
	const char *cpus = bw_numa_cpus(w->b, numa);
	char *mask = bw_cpumask(cpus, w->b->nr_cpus);

	snprintf(name, sizeof(name), "%04x:%02x", domain, bus);
	snprintf(rel, sizeof(rel), "pci_bus/%s", name);
	bw_open(w, &d, owner->fd, owner->path, rel);
	bw_printf(w, d.fd, "cpulistaffinity", "%s\n", cpus);
	bw_printf(w, d.fd, "cpuaffinity", "%s\n", mask ? mask : "0");
	bw_text(w, d.fd, "uevent", "");
	bw_writeonly(w, d.fd, "rescan");
	bw_link(w, &d, "subsystem", "class/pci_bus");
	bw_link(w, &d, "device", owner->path);
	snprintf(cls, sizeof(cls), "class/pci_bus/%s", name);
	bw_link_at(w, cls, d.path);
	bw_close(&d);
	free(mask);
}

void bw_function(struct bw *w, const struct board_func *f)
{
	const struct board *b = w->b;
	bool bridge = board_kind_is_bridge(f->kind);
	struct bw_dir d;
	uint8_t config[256];
	char path[PATH_MAX];
	char subsys_id[16];
	const char *cpus = bw_numa_cpus(b, f->numa);
	char *mask = bw_cpumask(cpus, b->nr_cpus);

	bw_open(w, &d, w->sys, "", f->sysfs_path);
	bw_printf(w, d.fd, "vendor", "0x%04x\n", f->vendor);
	bw_printf(w, d.fd, "device", "0x%04x\n", f->device);
	bw_printf(w, d.fd, "subsystem_vendor", "0x%04x\n", f->sub_vendor);
	bw_printf(w, d.fd, "subsystem_device", "0x%04x\n", f->sub_device);
	bw_printf(w, d.fd, "class", "0x%06x\n", f->class_code);
	bw_printf(w, d.fd, "revision", "0x%02x\n", f->revision);
	build_config(f, config);
	bw_write(w, d.fd, "config", config, sizeof(config));
	bw_printf(w, d.fd, "irq", "%d\n", f->irq);
	write_resource(w, &d, f);
	bw_printf(w, d.fd, "modalias", "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n",
		  f->vendor, f->device, f->sub_vendor, f->sub_device, f->class_code >> 16,
		  (f->class_code >> 8) & 0xff, f->class_code & 0xff);
	snprintf(subsys_id, sizeof(subsys_id), "%04X:%04X", f->sub_vendor, f->sub_device);
	bw_printf(w, d.fd, "uevent",
		  "%s%s%sPCI_CLASS=%04X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%s\nPCI_SLOT_NAME=%s\n"
		  "MODALIAS=pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n",
		  f->driver ? "DRIVER=" : "", f->driver ? f->driver : "", f->driver ? "\n" : "",
		  f->class_code, f->vendor, f->device, subsys_id, f->bdf, f->vendor, f->device,
		  f->sub_vendor, f->sub_device, f->class_code >> 16, (f->class_code >> 8) & 0xff,
		  f->class_code & 0xff);
	bw_printf(w, d.fd, "numa_node", "%d\n", f->numa);
	bw_printf(w, d.fd, "local_cpulist", "%s\n", cpus);
	bw_printf(w, d.fd, "local_cpus", "%s\n", mask ? mask : "0");
	free(mask);
	bw_printf(w, d.fd, "current_link_speed", "%s\n", speed_text(f->link.mts));
	bw_printf(w, d.fd, "current_link_width", "%u\n", f->link.width);
	bw_printf(w, d.fd, "max_link_speed", "%s\n", speed_text(f->max_link.mts));
	bw_printf(w, d.fd, "max_link_width", "%u\n", f->max_link.width);
	bw_text(w, d.fd, "driver_override", "(null)\n");
	bw_printf(w, d.fd, "enable", "%d\n", f->driver ? 1 : 0);
	bw_text(w, d.fd, "d3cold_allowed", "1\n");
	/* left out for speed (a thousand functions must materialize in well
	 * under a second): power_state, msi_bus, dma_mask_bits, remove, rescan
	 * and other attributes nothing here reads */
	if (!bridge) {
		bw_text(w, d.fd, "reset_method", f->physfn ? "flr\n" : "flr bus\n");
		bw_writeonly(w, d.fd, "reset");
	}
	if (bridge) {
		bw_printf(w, d.fd, "secondary_bus_number", "%u\n", f->secondary);
		bw_printf(w, d.fd, "subordinate_bus_number", "%u\n", f->subordinate);
		bw_text(w, d.fd, "ari_enabled", "0\n");
		write_pci_bus(w, &d, f->domain, f->secondary, f->numa);
	}
	if (!f->physfn && (!bridge || f->kind == BOARD_ROOT_PORT))
		write_aer(w, &d, f);
	if ((f->class_code >> 8) == 0x0300)
		bw_printf(w, d.fd, "boot_vga", "%d\n", f->boot_vga ? 1 : 0);
	if (f->label)
		bw_printf(w, d.fd, "label", "%s\n", f->label);
	if (f->acpi_index >= 0)
		bw_printf(w, d.fd, "acpi_index", "%d\n", f->acpi_index);

	bw_link(w, &d, "subsystem", "bus/pci");
	if (f->driver) {
		snprintf(path, sizeof(path), "bus/pci/drivers/%s", f->driver);
		bw_link(w, &d, "driver", path);
		snprintf(path, sizeof(path), "bus/pci/drivers/%s/%s", f->driver, f->bdf);
		bw_link_at(w, path, f->sysfs_path);
	}
	if (b->iommu && f->iommu_group >= 0) {
		snprintf(path, sizeof(path), "kernel/iommu_groups/%d", f->iommu_group);
		bw_link(w, &d, "iommu_group", path);
		snprintf(path, sizeof(path), "kernel/iommu_groups/%d/devices/%s", f->iommu_group,
			 f->bdf);
		bw_link_at(w, path, f->sysfs_path);
	}
	snprintf(path, sizeof(path), "bus/pci/devices/%s", f->bdf);
	bw_link_at(w, path, f->sysfs_path);

	if (f->has_sriov) {
		bw_printf(w, d.fd, "sriov_totalvfs", "%u\n", f->total_vfs);
		bw_printf(w, d.fd, "sriov_numvfs", "%u\n", f->num_vfs);
		bw_printf(w, d.fd, "sriov_offset", "%u\n", f->vf_offset);
		bw_printf(w, d.fd, "sriov_stride", "%u\n", f->vf_stride);
		bw_printf(w, d.fd, "sriov_vf_device", "%x\n", f->vf_device);
		bw_printf(w, d.fd, "sriov_drivers_autoprobe", "%d\n", f->sriov_autoprobe ? 1 : 0);
		for (unsigned v = 0; v < f->num_vfs; v++) {
			char name[24];

			snprintf(name, sizeof(name), "virtfn%u", v);
			bw_link(w, &d, name, f->vfs[v]->sysfs_path);
		}
	}
	if (f->physfn)
		bw_link(w, &d, "physfn", f->physfn->sysfs_path);

	for (size_t i = 0; i < f->n_files; i++)
		bw_text(w, d.fd, f->files[i].name, f->files[i].content);
	bw_function_classes(w, f, &d);
	bw_close(&d);
}

struct share {
	struct bw *w;
	size_t first, step;
};

static void *write_share(void *arg)
{
	const struct share *sh = arg;
	const struct board *b = sh->w->b;

	for (size_t i = sh->first; i < b->n_funcs && !bw_failed(sh->w); i += sh->step)
		bw_function(sh->w, b->tree[i]);
	return NULL;
}

/* Function directories are independent (each writer creates its missing
 * parents, and a parent finding its directory already there is fine), so
 * big boards are written by a few threads: syscalls dominate the cost. */
static void write_functions(struct bw *w)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = w->b->n_funcs < 64 ? 1 : cpus < 1 ? 1 : cpus > 8 ? 8 : (size_t)cpus;
	pthread_t threads[8];
	struct share shares[8];
	size_t started = 0;

	for (size_t i = 0; i < n; i++)
		shares[i] = (struct share){ .w = w, .first = i, .step = n };
	for (size_t i = 1; i < n; i++) {
		if (pthread_create(&threads[i], NULL, write_share, &shares[i]) != 0)
			break;
		started = i;
	}
	/* shares whose thread did not start are written here */
	for (size_t i = started + 1; i < n; i++)
		write_share(&shares[i]);
	write_share(&shares[0]);
	for (size_t i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);
}

void bw_driver(struct bw *w, const char *driver)
{
	struct bw_dir d;
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", driver);
	bw_open(w, &d, w->sys, "", rel);
	bw_writeonly(w, d.fd, "bind");
	bw_writeonly(w, d.fd, "unbind");
	bw_writeonly(w, d.fd, "new_id");
	bw_writeonly(w, d.fd, "remove_id");
	bw_writeonly(w, d.fd, "uevent");
	bw_close(&d);
}

static void write_drivers(struct bw *w)
{
	const struct board *b = w->b;
	const char *done[64];
	size_t n_done = 0;

	for (size_t i = 0; i < b->n_funcs; i++) {
		const char *drv = b->funcs[i]->driver;
		bool seen = false;

		if (!drv)
			continue;
		for (size_t k = 0; k < n_done && !seen; k++)
			seen = !strcmp(done[k], drv);
		if (seen)
			continue;
		if (n_done < sizeof(done) / sizeof(done[0]))
			done[n_done++] = drv;
		bw_driver(w, drv);
	}
}

static void write_slots(struct bw *w)
{
	const struct board *b = w->b;

	for (size_t i = 0; i < b->n_funcs; i++) {
		const struct board_func *f = b->funcs[i];
		struct bw_dir d;
		char rel[PATH_MAX];

		if (!f->slot)
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/slots/%s", f->slot);
		bw_open(w, &d, w->sys, "", rel);
		bw_printf(w, d.fd, "address", "%04x:%02x:%02x\n", f->domain, f->bus, f->dev);
		bw_printf(w, d.fd, "cur_bus_speed", "%s\n", speed_text(f->link.mts));
		bw_printf(w, d.fd, "max_bus_speed", "%s\n", speed_text(f->max_link.mts));
		bw_close(&d);
	}
}

static void write_iommu_groups(struct bw *w)
{
	const struct board *b = w->b;
	unsigned char *seen;

	if (!b->iommu)
		return;
	seen = calloc(65536 / 8, 1);
	if (!seen) {
		bw_fail(w, ENOMEM, "out of memory", "");
		return;
	}
	bw_mkdirs(w, w->sys, "kernel/iommu_groups");
	for (size_t i = 0; i < b->n_funcs; i++) {
		unsigned g = (unsigned)b->funcs[i]->iommu_group;
		char rel[64];

		if (b->funcs[i]->iommu_group < 0)
			continue;
		if (seen[g / 8] & (1u << (g % 8)))
			continue;
		seen[g / 8] |= (unsigned char)(1u << (g % 8));
		snprintf(rel, sizeof(rel), "kernel/iommu_groups/%u", g);
		bw_mkdirs(w, w->sys, rel);
		snprintf(rel, sizeof(rel), "kernel/iommu_groups/%u/type", g);
		bw_text(w, w->sys, rel, "DMA-FQ\n");
	}
	free(seen);
}

void bw_pci(struct bw *w)
{
	const struct board *b = w->b;
	struct bw_dir bus;

	bw_mkdirs(w, w->sys, "bus/pci/devices");
	bw_mkdirs(w, w->sys, "bus/pci/slots");
	bw_mkdirs(w, w->sys, "class/pci_bus");
	bw_open(w, &bus, w->sys, "", "bus/pci");
	bw_writeonly(w, bus.fd, "drivers_probe");
	bw_text(w, bus.fd, "drivers_autoprobe", "1\n");
	bw_writeonly(w, bus.fd, "rescan");
	bw_text(w, bus.fd, "resource_alignment", "\n");
	bw_writeonly(w, bus.fd, "uevent");
	bw_close(&bus);
	bw_mkdirs(w, w->sys, "bus/pci/drivers");
	write_drivers(w);
	write_iommu_groups(w);

	for (size_t i = 0; i < b->n_roots; i++) {
		const struct board_root *r = &b->roots[i];
		struct bw_dir d;
		char rel[48];

		snprintf(rel, sizeof(rel), "devices/%s", r->name);
		bw_open(w, &d, w->sys, "", rel);
		bw_text(w, d.fd, "uevent", "");
		write_pci_bus(w, &d, r->domain, r->bus, r->numa);
		bw_close(&d);
	}
	write_functions(w);
	write_slots(w);
}
