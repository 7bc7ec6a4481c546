/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The model of amdgpu's current_compute_partition store (board_node_ops.h):
 * drivers/gpu/drm/amd/amdgpu/amdgpu_gfx.c amdgpu_gfx_set_compute_partition
 * takes SPX, DPX, TPX, QPX or CPX in any case (-EINVAL otherwise);
 * aqua_vanjaram.c refuses a mode the memory partition mode does not allow
 * (-EINVAL); the same mode again changes nothing; otherwise KFD is torn
 * down and brought up again with one topology node per partition, each
 * naming its XCP's render node (docs/sharing.md, "AMD compute partitions").
 * Simplified: the XCP render nodes appear in dev/dri at the first switch
 * (the driver makes them at load), and a busy GPU (-EBUSY) is not modelled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "boards/sim/board.h"
#include "boards/sim/board_node.h"
#include "boards/sim/board_write.h"

static int read_attr(struct board_node *bn, const char *address, const char *file, char *buf,
		     size_t size)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	return bn->real.read(bn->real.userdata, rel, buf, size);
}

/* Partitions of @mode on a GPU of @xcc XCCs; 0 for no mode. */
static unsigned mode_count(const char *mode, unsigned xcc)
{
	static const struct { const char *name; unsigned n; } modes[] = {
		{ "SPX", 1 }, { "DPX", 2 }, { "TPX", 3 }, { "QPX", 4 }, { "CPX", 0 },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcasecmp(mode, modes[i].name))
			return modes[i].n ? modes[i].n : xcc;
	return 0;
}

static unsigned num_xcc(const struct board_func *f)
{
	const char *p = f->kfd->properties ? strstr(f->kfd->properties, "num_xcc ") : NULL;
	unsigned n;

	return p && sscanf(p + 8, "%u", &n) == 1 && n > 0 && n <= 64 ? n : 8;
}

/* aqua_vanjaram's rule, as the backend reads it (amdgpu_partition_plan.c). */
static bool allowed(const char *mode, unsigned nps, unsigned xcc)
{
	if (!strcasecmp(mode, "SPX"))
		return nps == 1;
	if (!strcasecmp(mode, "DPX"))
		return (nps == 1 || nps == 2) && xcc % 4 == 0;
	if (!strcasecmp(mode, "TPX"))
		return nps == 1 && xcc % 3 == 0;
	if (!strcasecmp(mode, "QPX"))
		return (nps == 1 || nps == 4) && xcc / 4 >= 2;
	return xcc > 1 && (nps == 1 || nps == 4) && xcc % nps == 0;
}

static bool listed(const char *list, const char *mode)
{
	char copy[128], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save))
		if (!strcasecmp(w, mode))
			return true;
	return false;
}

int bn_compute_partition(struct board_node *bn, struct board_func *f, const char *value)
{
	char mode[8], now[16], avail[128] = "", memory[16] = "", rel[300], err[256];
	unsigned xcc = num_xcc(f), nps = 1, *parts;
	struct bw w;
	size_t gpus = 0;
	int r;

	if (strlen(value) >= sizeof(mode) || !mode_count(value, xcc))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(mode); i++)
		mode[i] = (char)(value[i] >= 'a' && value[i] <= 'z' ? value[i] - 32 : value[i]);
	if (read_attr(bn, f->bdf, "available_compute_partition", avail, sizeof(avail)) < 0 ||
	    !listed(avail, mode))
		return -EINVAL;
	if (read_attr(bn, f->bdf, "current_memory_partition", memory, sizeof(memory)) > 0 &&
	    sscanf(memory, "NPS%u", &nps) != 1)
		nps = 1;
	if (!allowed(mode, nps, xcc))
		return -EINVAL;
	if (read_attr(bn, f->bdf, "current_compute_partition", now, sizeof(now)) > 0 &&
	    !strcasecmp(now, mode))
		return 0;
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/current_compute_partition", f->bdf);
	if ((r = bn->real.write(bn->real.userdata, rel, mode)) < 0)
		return r;

	/* KFD comes back with the topology of every GPU's mode now */
	for (size_t i = 0; i < bn->b.n_funcs; i++)
		gpus += bn->b.funcs[i]->kfd != NULL;
	if (!(parts = calloc(gpus ? gpus : 1, sizeof(*parts))))
		return -ENOMEM;
	for (size_t i = 0, g = 0; i < bn->b.n_funcs; i++) {
		const struct board_func *gpu = bn->b.funcs[i];
		if (!gpu->kfd)
			continue;
		if (read_attr(bn, gpu->bdf, "current_compute_partition", now, sizeof(now)) > 0)
			parts[g] = mode_count(now, num_xcc(gpu));
		g++;
	}
	{
		char nodes[PATH_MAX + 64];
		snprintf(nodes, sizeof(nodes), "%s/devices/virtual/kfd/kfd/topology/nodes", bn->sys);
		board_remove_tree(nodes);
	}
	r = bw_begin(&w, &bn->b, bn->dir, err, sizeof(err));
	if (r >= 0) {
		bw_kfd_nodes(&w, parts);
		r = bw_end(&w, err, sizeof(err));
	}
	free(parts);
	return r < 0 ? -EIO : 0;
}
