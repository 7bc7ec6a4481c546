/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the NVIDIA driver shows outside sysfs: /proc/driver/nvidia (version,
 * per-GPU information, MIG capabilities), /proc/driver/nvidia-caps/
 * mig-minors, the /dev/nvidia* nodes, and nvml.json for the fake NVML
 * library of the tests. Formats: kernel-open/nvidia/nv-procfs.c and the MIG
 * user guide (shared/reference/linux-devices.md §4.4).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "boards/sim/board_write.h"

#define CAP_MODE_CONFIG 256	/* 0400 */
#define CAP_MODE_READ 292	/* 0444 */

static void write_information(struct bw *w, const struct board_func *f)
{
	const struct board_nvidia *nv = f->nvidia;
	char rel[96];
	unsigned long long mask = nv->dma_bits >= 64 ? ~0ull : (1ull << nv->dma_bits) - 1;

	snprintf(rel, sizeof(rel), "driver/nvidia/gpus/%s/information", f->bdf);
	bw_printf(w, w->proc, rel,
		  "Model: \t\t %s\n"
		  "IRQ:   \t\t %d\n"
		  "GPU UUID: \t %s\n"
		  "Video BIOS: \t %s\n"
		  "Bus Type: \t PCIe\n"
		  "DMA Size: \t %d bits\n"
		  "DMA Mask: \t 0x%llx\n"
		  "Bus Location: \t %s\n"
		  "Device Minor: \t %d\n"
		  "%s%s%s"
		  "GPU Excluded:\t %s\n",
		  nv->model, nv->irq, nv->uuid, nv->vbios, nv->dma_bits, mask, f->bdf, nv->minor,
		  nv->gsp_firmware ? "GPU Firmware: \t " : "", nv->gsp_firmware ? nv->gsp_firmware : "",
		  nv->gsp_firmware ? "\n" : "", nv->excluded ? "Yes" : "No");
}

static void write_cap(struct bw *w, const char *rel, unsigned minor, unsigned mode)
{
	bw_printf(w, w->proc, rel, "DeviceFileMinor: %u\nDeviceFileMode: %u\nDeviceFileModify: 1\n",
		  minor, mode);
}

static void write_mig_minors(struct bw *w, int max_minor)
{
	size_t cap = 64 + (size_t)(max_minor + 1) * 15 * 9 * 32, len = 0;
	char *buf = malloc(cap);

	if (!buf) {
		bw_fail(w, ENOMEM, "out of memory", "");
		return;
	}
	len += (size_t)snprintf(buf + len, cap - len, "config 1\nmonitor 2\n");
	for (int g = 0; g <= max_minor; g++)
		for (int gi = 0; gi < 15; gi++) {
			unsigned base = 3u + (unsigned)g * 135u + (unsigned)gi * 9u;

			len += (size_t)snprintf(buf + len, cap - len, "gpu%d/gi%d/access %u\n", g, gi,
						base);
			for (int ci = 0; ci < 8; ci++)
				len += (size_t)snprintf(buf + len, cap - len,
							"gpu%d/gi%d/ci%d/access %u\n", g, gi, ci,
							base + 1u + (unsigned)ci);
		}
	bw_write(w, w->proc, "driver/nvidia-caps/mig-minors", buf, len);
	free(buf);
}

/* The GPU instance profiles and placements of a MIG-capable GPU the
 * built-in tables know (dynamic MIG with the fake NVML). */
static void nvml_profiles(struct json_object *o, uint16_t device_id)
{
	const struct board_mig_profile *table = board_mig_profiles(device_id);
	struct json_object *arr;

	if (!table)
		return;
	arr = json_object_new_array();
	for (const struct board_mig_profile *p = table; p->name; p++) {
		struct json_object *e = json_object_new_object(), *pl = json_object_new_array();
		unsigned starts[8], size, n = board_mig_placements(table, p, starts, &size);
		bool media = strstr(p->name, "+me") != NULL;

		json_object_object_add(e, "id", json_object_new_int(p->gi_profile_id));
		json_object_object_add(e, "name", json_object_new_string(p->name));
		json_object_object_add(e, "slices", json_object_new_int(p->slices));
		json_object_object_add(e, "instances", json_object_new_int(media ? 1 : (int)n));
		json_object_object_add(e, "multiprocessors", json_object_new_int(p->multiprocessors));
		json_object_object_add(e, "copyEngines", json_object_new_int(p->copy_engines));
		json_object_object_add(e, "decoders", json_object_new_int(p->decoders));
		json_object_object_add(e, "encoders", json_object_new_int(p->encoders));
		json_object_object_add(e, "jpegEngines", json_object_new_int(p->jpeg_engines));
		json_object_object_add(e, "ofaEngines", json_object_new_int(p->ofa_engines));
		json_object_object_add(e, "memoryBytes", json_object_new_int64((int64_t)(p->memory_mib << 20)));
		for (unsigned k = 0; k < n; k++) {
			struct json_object *x = json_object_new_array();
			json_object_array_add(x, json_object_new_int((int)starts[k]));
			json_object_array_add(x, json_object_new_int((int)size));
			json_object_array_add(pl, x);
		}
		json_object_object_add(e, "placements", pl);
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "migProfiles", arr);
}

static struct json_object *nvml_device(const struct board_func *f)
{
	const struct board_nvidia *nv = f->nvidia;
	struct json_object *o = json_object_new_object(), *mode = json_object_new_object();
	struct json_object *migs = json_object_new_array();

	json_object_object_add(o, "pciBusId", json_object_new_string(f->bdf));
	json_object_object_add(o, "index", json_object_new_int(nv->nvml_index));
	json_object_object_add(o, "minor", json_object_new_int(nv->minor));
	json_object_object_add(o, "uuid", json_object_new_string(nv->uuid));
	json_object_object_add(o, "name", json_object_new_string(nv->nvml_name));
	json_object_object_add(o, "brand", json_object_new_string(nv->brand));
	json_object_object_add(o, "architecture", json_object_new_string(nv->architecture));
	json_object_object_add(o, "cudaComputeCapability", json_object_new_string(nv->cuda_cc));
	json_object_object_add(o, "memoryTotalBytes",
			       json_object_new_int64((int64_t)nv->memory_total));
	json_object_object_add(mode, "current", json_object_new_int(nv->mig_current));
	json_object_object_add(mode, "pending", json_object_new_int(nv->mig_pending));
	json_object_object_add(o, "migMode", mode);
	for (size_t i = 0; i < nv->n_mig; i++) {
		const struct board_mig *m = &nv->mig[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "uuid", json_object_new_string(m->uuid));
		json_object_object_add(e, "profile", json_object_new_string(m->profile));
		json_object_object_add(e, "giProfileId", json_object_new_int(m->gi_profile_id));
		json_object_object_add(e, "ciProfileId", json_object_new_int(m->ci_profile_id));
		json_object_object_add(e, "gi", json_object_new_int(m->gi));
		json_object_object_add(e, "ci", json_object_new_int(m->ci));
		json_object_object_add(e, "placementStart", json_object_new_int(m->placement_start));
		json_object_object_add(e, "placementSize", json_object_new_int(m->placement_size));
		json_object_object_add(e, "memoryBytes",
				       json_object_new_int64((int64_t)m->memory_bytes));
		json_object_object_add(e, "multiprocessors", json_object_new_int(m->multiprocessors));
		json_object_object_add(e, "copyEngines", json_object_new_int(m->copy_engines));
		json_object_object_add(e, "decoders", json_object_new_int(m->decoders));
		json_object_object_add(e, "encoders", json_object_new_int(m->encoders));
		json_object_object_add(e, "jpegEngines", json_object_new_int(m->jpeg_engines));
		json_object_object_add(e, "ofaEngines", json_object_new_int(m->ofa_engines));
		json_object_object_add(e, "giAccessMinor", json_object_new_int((int)m->gi_minor));
		json_object_object_add(e, "ciAccessMinor", json_object_new_int((int)m->ci_minor));
		json_object_array_add(migs, e);
	}
	json_object_object_add(o, "migDevices", migs);
	nvml_profiles(o, f->device);
	return o;
}

static void write_nvml_json(struct bw *w)
{
	const struct board *b = w->b;
	struct json_object *root, *devices;
	const char *text;
	bool any = false;

	for (size_t i = 0; i < b->n_gpus; i++)
		any |= b->gpus[i]->nvidia->has_nvml && !b->gpus[i]->nvidia->excluded;
	if (!any || bw_failed(w))
		return;
	root = json_object_new_object();
	devices = json_object_new_array();
	json_object_object_add(root, "driverVersion", json_object_new_string(b->nvidia_driver));
	json_object_object_add(root, "cudaDriverVersion", json_object_new_int(b->cuda_driver));
	/* b->gpus is in PCI order, which is NVML's index order */
	for (size_t i = 0; i < b->n_gpus; i++)
		if (b->gpus[i]->nvidia->has_nvml && !b->gpus[i]->nvidia->excluded)
			json_object_array_add(devices, nvml_device(b->gpus[i]));
	json_object_object_add(root, "devices", devices);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text) {
		bw_text(w, w->top, "nvml.json", text);
	} else {
		bw_fail(w, ENOMEM, "out of memory writing", "nvml.json");
	}
	json_object_put(root);
}

void bw_nvidia(struct bw *w)
{
	const struct board *b = w->b;
	int max_minor = -1;

	if (!b->n_gpus)
		return;
	bw_printf(w, w->proc, "driver/nvidia/version",
		  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Release Build  "
		  "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:23:56 UTC 2024\n"
		  "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n", b->nvidia_driver);
	bw_text(w, w->proc, "driver/nvidia/params",
		"ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileUID: 0\n"
		"DeviceFileGID: 0\nDeviceFileMode: 438\nEnableGpuFirmware: 18\n");
	bw_printf(w, w->sys, "module/nvidia/version", "%s\n", b->nvidia_driver);
	write_cap(w, "driver/nvidia/capabilities/mig/config", 1, CAP_MODE_CONFIG);
	write_cap(w, "driver/nvidia/capabilities/mig/monitor", 2, CAP_MODE_READ);

	bw_devnode(w, "nvidiactl", MAJOR_NVIDIA, 255);
	bw_devnode(w, "nvidia-modeset", MAJOR_NVIDIA, 254);
	bw_devnode(w, "nvidia-uvm", MAJOR_NVIDIA_UVM, 0);
	bw_devnode(w, "nvidia-uvm-tools", MAJOR_NVIDIA_UVM, 1);
	bw_devnode(w, "nvidia-caps/nvidia-cap1", MAJOR_NVIDIA_CAPS, 1);
	bw_devnode(w, "nvidia-caps/nvidia-cap2", MAJOR_NVIDIA_CAPS, 2);

	for (size_t i = 0; i < b->n_gpus; i++) {
		const struct board_func *f = b->gpus[i];
		const struct board_nvidia *nv = f->nvidia;
		char name[96];

		if (nv->minor > max_minor)
			max_minor = nv->minor;
		write_information(w, f);
		if (nv->excluded)
			continue;
		snprintf(name, sizeof(name), "nvidia%d", nv->minor);
		bw_devnode(w, name, MAJOR_NVIDIA, (unsigned)nv->minor);
		for (size_t k = 0; k < nv->n_mig; k++) {
			const struct board_mig *m = &nv->mig[k];
			bool first_ci = true;

			/* the GI capability once, however many CIs it has */
			for (size_t j = 0; j < k; j++)
				first_ci &= nv->mig[j].gi != m->gi;
			if (first_ci) {
				snprintf(name, sizeof(name),
					 "driver/nvidia/capabilities/gpu%d/mig/gi%d/access", nv->minor,
					 m->gi);
				write_cap(w, name, m->gi_minor, CAP_MODE_READ);
				snprintf(name, sizeof(name), "nvidia-caps/nvidia-cap%u", m->gi_minor);
				bw_devnode(w, name, MAJOR_NVIDIA_CAPS, m->gi_minor);
			}
			snprintf(name, sizeof(name), "driver/nvidia/capabilities/gpu%d/mig/gi%d/ci%d/access",
				 nv->minor, m->gi, m->ci);
			write_cap(w, name, m->ci_minor, CAP_MODE_READ);
			snprintf(name, sizeof(name), "nvidia-caps/nvidia-cap%u", m->ci_minor);
			bw_devnode(w, name, MAJOR_NVIDIA_CAPS, m->ci_minor);
		}
	}
	write_mig_minors(w, max_minor);
	write_nvml_json(w);
}
