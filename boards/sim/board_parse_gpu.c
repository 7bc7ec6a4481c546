/* SPDX-License-Identifier: Apache-2.0 */
/* Board file -> model: DRM nodes, NVIDIA GPUs (with NVML data and MIG),
 * ROCm's kfd. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_parse.h"

int p_drm(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at)
{
	static const char *const keys[] = { "card", "render", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "drm");
	int r;

	f->drm.card = f->drm.render = -1;
	if (!json_object_object_get_ex(obj, "drm", &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_boolean)) {
		if (json_object_get_boolean(v))
			f->drm.card = f->drm.render = -2;
		return 0;
	}
	r = p_check_keys(c, v, &kp, "'drm' (or true)", keys);
	if (r < 0)
		return r;
	f->drm.card = f->drm.render = -2;
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "render" : "card";
		int *dst = i ? &f->drm.render : &f->drm.card;
		struct json_object *e = NULL;
		long long x;

		if (!json_object_object_get_ex(v, key, &e))
			continue;
		if (!e || json_object_is_type(e, json_type_boolean)) {
			*dst = e && json_object_get_boolean(e) ? -2 : -1;
			continue;
		}
		r = p_int(c, v, key, &kp, i ? 128 : 0, i ? 255 : 127, &x);
		if (r < 0)
			return r;
		*dst = (int)x;
	}
	return 0;
}

static int p_mig(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at, struct board_mig *m)
{
	static const char *const keys[] = {
		"profile", "gi", "ci", "placement", "gi_profile_id", "ci_profile_id", "memory",
		"multiprocessors", "copy_engines", "decoders", "encoders", "jpeg_engines",
		"ofa_engines", "uuid", NULL,
	};
	const struct board_mig_profile *prof;
	long long x;
	int r = p_check_keys(c, obj, at, "MIG device", keys);
	struct {
		const char *key;
		int *dst;
		int def;
	} counts[] = {
		{ "gi_profile_id", &m->gi_profile_id, 0 },
		{ "ci_profile_id", &m->ci_profile_id, 0 },
		{ "multiprocessors", &m->multiprocessors, 0 },
		{ "copy_engines", &m->copy_engines, 0 },
		{ "decoders", &m->decoders, 0 },
		{ "encoders", &m->encoders, 0 },
		{ "jpeg_engines", &m->jpeg_engines, 0 },
		{ "ofa_engines", &m->ofa_engines, 0 },
	};

	if (r < 0)
		return r;
	m->at = p_keep_path(c, at);
	r = p_str(c, obj, "profile", at, &m->profile);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "a MIG device needs 'profile' (e.g. 1g.10gb)");
	prof = board_mig_profile(f->device, m->profile);
	if (prof) {
		counts[0].def = prof->gi_profile_id;
		/* the default compute instance spans the whole GPU instance;
		 * compute-instance profile ids follow the slice naming */
		counts[1].def = prof->slices == 1 ? 0 : prof->slices == 2 ? 1 : prof->slices == 3 ? 2
			      : prof->slices == 4 ? 3 : 4;
		counts[2].def = prof->multiprocessors;
		counts[3].def = prof->copy_engines;
		counts[4].def = prof->decoders;
		counts[5].def = prof->encoders;
		counts[6].def = prof->jpeg_engines;
		counts[7].def = prof->ofa_engines;
		m->memory_bytes = prof->memory_mib << 20;
		m->placement_size = prof->slices == 7 && f->device >= 0x20b0 && f->device <= 0x20f3
					    ? 8 : prof->slices;
	}
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		*counts[i].dst = counts[i].def;
		r = p_int(c, obj, counts[i].key, at, 0, 1024, &x);
		if (r < 0)
			return r;
		if (r > 0)
			*counts[i].dst = (int)x;
		else if (!prof && i >= 2 && i != 5 && i != 6 && i != 7)
			return board_fail(c->d, at, "MIG profile '%s' is not in the built-in tables "
					  "for %04x:%04x; give '%s' and the other counts", m->profile,
					  f->vendor, f->device, counts[i].key);
	}
	if ((r = p_size(c, obj, "memory", at, &m->memory_bytes)) < 0)
		return r;
	if (!m->memory_bytes)
		return board_fail(c->d, at, "MIG device needs 'memory'");
	m->gi = -1;
	if ((r = p_int(c, obj, "gi", at, 0, 14, &x)) < 0)
		return r;
	if (r > 0)
		m->gi = (int)x;
	if ((r = p_int(c, obj, "ci", at, 0, 7, &x)) < 0)
		return r;
	m->ci = r > 0 ? (int)x : 0;
	{
		struct json_object *pl = NULL;
		struct jpath pp = JP_KEY(at, "placement");

		if (!json_object_object_get_ex(obj, "placement", &pl) || !pl)
			return board_fail(c->d, at, "MIG device needs 'placement' (the first memory "
					  "slice, or {start, size})");
		if (json_object_is_type(pl, json_type_object)) {
			static const char *const pkeys[] = { "start", "size", NULL };

			r = p_check_keys(c, pl, &pp, "placement", pkeys);
			if (r < 0)
				return r;
			if ((r = p_int(c, pl, "start", &pp, 0, 7, &x)) <= 0)
				return r < 0 ? r : board_fail(c->d, &pp, "placement needs 'start'");
			m->placement_start = (int)x;
			if ((r = p_int(c, pl, "size", &pp, 1, 8, &x)) < 0)
				return r;
			if (r > 0)
				m->placement_size = (int)x;
		} else {
			if ((r = p_int(c, obj, "placement", at, 0, 7, &x)) < 0)
				return r;
			m->placement_start = (int)x;
		}
		if (prof && prof->slices < 7 &&
		    (prof->slices == 1 ? m->placement_start > 6
		     : prof->slices == 3 ? m->placement_start % 4 != 0
					 : m->placement_start % prof->slices != 0 ||
					   m->placement_start + prof->slices > 6 + (prof->slices == 4)))
			return board_fail(c->d, &pp, "profile %s cannot start at memory slice %d",
					  m->profile, m->placement_start);
		if (prof && prof->slices == 7 && m->placement_start != 0)
			return board_fail(c->d, &pp, "profile %s starts at slice 0", m->profile);
		if (m->placement_size < 1 || m->placement_start + m->placement_size > 8)
			return board_fail(c->d, &pp, "placement %d+%d does not fit the GPU's 8 memory "
					  "slices", m->placement_start, m->placement_size);
	}
	r = p_str(c, obj, "uuid", at, &m->uuid);
	return r < 0 ? r : 0;
}

static bool valid_uuid(const char *s)
{
	static const int dash[] = { 8, 13, 18, 23 };

	if (strlen(s) != 36)
		return false;
	for (int i = 0, d = 0; i < 36; i++) {
		if (d < 4 && i == dash[d]) {
			if (s[i] != '-')
				return false;
			d++;
		} else if (!isxdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return true;
}

/* NVML identity defaults of common data-centre GPUs (NVML's names; the
 * compute capability of each architecture). */
static const struct {
	uint16_t device;
	const char *name, *architecture, *cuda_cc;
} nvidia_defaults[] = {
	{ 0x20b0, "NVIDIA A100-SXM4-40GB", "Ampere", "8.0" },
	{ 0x20b2, "NVIDIA A100-SXM4-80GB", "Ampere", "8.0" },
	{ 0x20b5, "NVIDIA A100 80GB PCIe", "Ampere", "8.0" },
	{ 0x20f1, "NVIDIA A100-PCIE-40GB", "Ampere", "8.0" },
	{ 0x2330, "NVIDIA H100 80GB HBM3", "Hopper", "9.0" },
	{ 0x2331, "NVIDIA H100 PCIe", "Hopper", "9.0" },
	{ 0x2321, "NVIDIA H100 NVL", "Hopper", "9.0" },
	{ 0x2335, "NVIDIA H200", "Hopper", "9.0" },
	{ 0x233b, "NVIDIA H200 NVL", "Hopper", "9.0" },
	{ 0x26b5, "NVIDIA L40", "Ada Lovelace", "8.9" },
	{ 0x26b9, "NVIDIA L40S", "Ada Lovelace", "8.9" },
	{ 0x2901, "NVIDIA B200", "Blackwell", "10.0" },
};

int p_nvidia(struct pctx *c, struct board_func *f, struct json_object *obj,
		    const struct jpath *at)
{
	static const char *const keys[] = {
		"minor", "uuid", "model", "vbios", "gsp_firmware", "irq", "dma_bits", "excluded",
		"nvml", "mig", NULL,
	};
	static const char *const nvml_keys[] = {
		"name", "brand", "architecture", "cuda_compute_capability", "memory", "mig_mode",
		NULL,
	};
	struct json_object *v = NULL, *nvml = NULL, *migs = NULL;
	struct jpath kp = JP_KEY(at, "nvidia");
	struct board_nvidia *nv;
	bool single = false;
	long long x;
	size_t n;
	int r;

	if (!json_object_object_get_ex(obj, "nvidia", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'nvidia'", keys);
	if (r < 0)
		return r;
	nv = f->nvidia = arena_alloc(c->a, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv->at = p_keep_path(c, &kp);
	nv->minor = -1;
	if ((r = p_int(c, v, "minor", &kp, 0, 253, &x)) < 0)
		return r;
	if (r > 0)
		nv->minor = (int)x;
	if ((r = p_str(c, v, "uuid", &kp, &nv->uuid)) < 0)
		return r;
	if (nv->uuid && (strncmp(nv->uuid, "GPU-", 4) || !valid_uuid(nv->uuid + 4))) {
		struct jpath up = JP_KEY(&kp, "uuid");

		return board_fail(c->d, &up, "'uuid' must be GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
	}
	nv->model = "NVIDIA GPU";
	nv->architecture = "Unknown";
	nv->cuda_cc = "0.0";
	for (size_t i = 0; i < sizeof(nvidia_defaults) / sizeof(nvidia_defaults[0]); i++)
		if (nvidia_defaults[i].device == f->device) {
			nv->model = nvidia_defaults[i].name;
			nv->architecture = nvidia_defaults[i].architecture;
			nv->cuda_cc = nvidia_defaults[i].cuda_cc;
		}
	nv->vbios = "96.00.00.00.01";
	if ((r = p_text(c, v, "model", &kp, &nv->model)) < 0 ||
	    (r = p_text(c, v, "vbios", &kp, &nv->vbios)) < 0 ||
	    (r = p_text(c, v, "gsp_firmware", &kp, &nv->gsp_firmware)) < 0)
		return r;
	nv->irq = -1;
	if ((r = p_int(c, v, "irq", &kp, 0, 65535, &x)) < 0)
		return r;
	if (r > 0)
		nv->irq = (int)x;
	nv->dma_bits = 52;
	if ((r = p_int(c, v, "dma_bits", &kp, 32, 64, &x)) < 0)
		return r;
	if (r > 0)
		nv->dma_bits = (int)x;
	if ((r = p_bool(c, v, "excluded", &kp, &nv->excluded)) < 0)
		return r;

	if (json_object_object_get_ex(v, "nvml", &nvml) && nvml) {
		struct jpath np = JP_KEY(&kp, "nvml");
		struct json_object *mode = NULL;

		r = p_check_keys(c, nvml, &np, "'nvml'", nvml_keys);
		if (r < 0)
			return r;
		nv->has_nvml = true;
		nv->nvml_name = nv->model;
		nv->brand = "NVIDIA";
		if ((r = p_text(c, nvml, "name", &np, &nv->nvml_name)) < 0 ||
		    (r = p_text(c, nvml, "brand", &np, &nv->brand)) < 0 ||
		    (r = p_text(c, nvml, "architecture", &np, &nv->architecture)) < 0 ||
		    (r = p_text(c, nvml, "cuda_compute_capability", &np, &nv->cuda_cc)) < 0)
			return r;
		r = p_size(c, nvml, "memory", &np, &nv->memory_total);
		if (r < 0)
			return r;
		if (r == 0)
			return board_fail(c->d, &np, "'nvml' needs 'memory' (total bytes)");
		if (json_object_object_get_ex(nvml, "mig_mode", &mode) && mode) {
			struct jpath mp = JP_KEY(&np, "mig_mode");

			if (json_object_is_type(mode, json_type_boolean)) {
				nv->mig_current = nv->mig_pending = json_object_get_boolean(mode);
			} else {
				static const char *const mkeys[] = { "current", "pending", NULL };

				r = p_check_keys(c, mode, &mp, "'mig_mode' (or true/false)", mkeys);
				if (r < 0)
					return r;
				if ((r = p_int(c, mode, "current", &mp, 0, 1, &x)) < 0)
					return r;
				nv->mig_current = r > 0 ? (int)x : 0;
				nv->mig_pending = nv->mig_current;
				if ((r = p_int(c, mode, "pending", &mp, 0, 1, &x)) < 0)
					return r;
				if (r > 0)
					nv->mig_pending = (int)x;
			}
		}
	}

	r = p_list_of(c, v, "mig", &kp, &migs, &n, &single);
	if (r < 0)
		return r;
	nv->n_mig = n;
	nv->mig = arena_alloc(c->a, n * sizeof(*nv->mig) + 1);
	if (!nv->mig)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath mp = JP_KEY(&kp, "mig");
		struct jpath ip = JP_INDEX(&mp, i);

		r = p_mig(c, f, p_item(migs, single, i), single ? &mp : &ip, &nv->mig[i]);
		if (r < 0)
			return r;
	}
	if (n && nv->has_nvml && !nv->mig_current)
		return board_fail(c->d, &kp, "MIG devices need 'nvml: {mig_mode: true}'");
	if (n && !nv->has_nvml)
		nv->mig_current = nv->mig_pending = 1;
	return 0;
}

int p_kfd(struct pctx *c, struct board_func *f, struct json_object *obj,
		 const struct jpath *at)
{
	static const char *const keys[] = { "gpu_id", "properties", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "kfd");
	long long x;
	int r;

	if (!json_object_object_get_ex(obj, "kfd", &v) || !v)
		return 0;
	if (json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v))
		return 0;
	f->kfd = arena_alloc(c->a, sizeof(*f->kfd));
	if (!f->kfd)
		return -ENOMEM;
	/* kfd's gpu_id is a hash of the device; any stable 16-bit value does */
	f->kfd->gpu_id = 0;
	if (json_object_is_type(v, json_type_boolean))
		return 0;
	r = p_check_keys(c, v, &kp, "'kfd' (or true)", keys);
	if (r < 0)
		return r;
	if ((r = p_int(c, v, "gpu_id", &kp, 1, 65535, &x)) < 0)
		return r;
	if (r > 0)
		f->kfd->gpu_id = (unsigned)x;
	r = p_str(c, v, "properties", &kp, &f->kfd->properties);
	return r < 0 ? r : 0;
}
