/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Built-in MIG profile figures, so that a board names a profile and gets
 * the NVML numbers. Names and instance shapes: NVIDIA MIG user guide;
 * SM/engine counts and memory: go-nvml's mock tables (pkg/nvml/mock/shared/
 * gpus), A100 memory sizes as listed in shared/reference/linux-devices.md
 * §4.6. Real hardware reports slightly different SM and MiB figures.
 */
#include <string.h>

#include "boards/sim/board_model.h"

/* name, GI profile id, slices, SMs, copy engines, decoders, encoders, JPEG, OFA, MiB */
static const struct board_mig_profile a100_80gb[] = {
	{ "1g.10gb", 0, 1, 14, 1, 1, 0, 0, 0, 9856 },
	{ "1g.10gb+me", 7, 1, 14, 1, 1, 0, 1, 1, 9856 },
	{ "1g.20gb", 9, 1, 14, 1, 1, 0, 0, 0, 19968 },
	{ "2g.20gb", 1, 2, 28, 2, 1, 0, 0, 0, 19968 },
	{ "3g.40gb", 2, 3, 42, 3, 2, 0, 0, 0, 40192 },
	{ "4g.40gb", 3, 4, 56, 4, 2, 0, 0, 0, 40192 },
	{ "7g.80gb", 4, 7, 98, 7, 5, 0, 1, 1, 80384 },
	{ NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static const struct board_mig_profile h100_80gb[] = {
	{ "1g.10gb", 0, 1, 16, 1, 1, 0, 0, 0, 10240 },
	{ "1g.10gb+me", 7, 1, 16, 1, 1, 0, 1, 1, 10240 },
	{ "1g.20gb", 9, 1, 16, 1, 1, 0, 0, 0, 20480 },
	{ "2g.20gb", 1, 2, 32, 2, 1, 0, 0, 0, 20480 },
	{ "3g.40gb", 2, 3, 48, 3, 2, 0, 0, 0, 40960 },
	{ "4g.40gb", 3, 4, 64, 4, 2, 0, 0, 0, 40960 },
	{ "7g.80gb", 4, 7, 112, 7, 5, 0, 0, 0, 81920 },
	{ NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static const struct board_mig_profile h200_141gb[] = {
	{ "1g.18gb", 0, 1, 16, 1, 1, 0, 0, 0, 18432 },
	{ "1g.18gb+me", 7, 1, 16, 1, 1, 0, 1, 1, 18432 },
	{ "1g.35gb", 9, 1, 16, 1, 1, 0, 0, 0, 35840 },
	{ "2g.35gb", 1, 2, 32, 2, 1, 0, 0, 0, 35840 },
	{ "3g.71gb", 2, 3, 48, 3, 2, 0, 0, 0, 72704 },
	{ "4g.71gb", 3, 4, 64, 4, 2, 0, 0, 0, 72704 },
	{ "7g.141gb", 4, 7, 112, 7, 5, 0, 0, 0, 144384 },
	{ NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static const struct {
	uint16_t device;
	const struct board_mig_profile *table;
} gpus[] = {
	{ 0x20b2, a100_80gb },	/* A100 SXM4 80GB */
	{ 0x20b5, a100_80gb },	/* A100 PCIe 80GB */
	{ 0x2330, h100_80gb },	/* H100 SXM5 80GB */
	{ 0x2331, h100_80gb },	/* H100 PCIe */
	{ 0x2335, h200_141gb },	/* H200 SXM 141GB */
};

const struct board_mig_profile *board_mig_profiles(uint16_t device_id)
{
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++)
		if (gpus[i].device == device_id)
			return gpus[i].table;
	return NULL;
}

unsigned board_mig_placements(const struct board_mig_profile *table,
			      const struct board_mig_profile *p, unsigned starts[8],
			      unsigned *ret_size)
{
	uint64_t full = 0;
	unsigned size = 1, n = 0;

	for (const struct board_mig_profile *t = table; t->name; t++)
		if (t->memory_mib > full)
			full = t->memory_mib;
	while (size < 8 && (uint64_t)size * full < p->memory_mib * 8)
		size *= 2;
	for (unsigned start = 0; start + size <= 8; start += size)
		if (start + (unsigned)p->slices <= 7 || p->slices == 7)
			starts[n++] = start;
	*ret_size = size;
	return n;
}

const struct board_mig_profile *board_mig_profile(uint16_t device_id, const char *name)
{
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++) {
		if (gpus[i].device != device_id)
			continue;
		for (const struct board_mig_profile *p = gpus[i].table; p->name; p++)
			if (!strcmp(p->name, name))
				return p;
	}
	return NULL;
}
