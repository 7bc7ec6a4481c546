/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ROCm KFD topology (sysfs class/kfd/kfd/topology/nodes/<n>/properties):
 * one node per CPU socket and one per GPU, or per compute partition when an
 * Instinct GPU is partitioned (CPX, DPX ...). Each GPU node names its PCI
 * location and its DRM render minor, which is how partitions are told apart.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu.h"

#define TOPOLOGY "class/kfd/kfd/topology/nodes"

static int parse_properties(char *text, struct amd_kfd_node *n)
{
	char *save = NULL;
	bool gpu = false;

	n->render_minor = -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64];
		unsigned long long v;
		char tail;

		if (sscanf(line, "%63s %llu %c", key, &v, &tail) != 2)
			continue;
		if (!strcmp(key, "simd_count")) {
			n->simd_count = v;
			gpu = v > 0;	/* CPU nodes have no SIMDs */
		} else if (!strcmp(key, "simd_per_cu"))
			n->simd_per_cu = v;
		else if (!strcmp(key, "local_mem_size"))
			n->local_mem_size = v;
		else if (!strcmp(key, "gfx_target_version"))
			n->gfx_target_version = v;
		else if (!strcmp(key, "num_xcc"))
			n->num_xcc = v;
		else if (!strcmp(key, "domain") && v <= 0xffffffffu)
			n->domain = (unsigned)v;
		else if (!strcmp(key, "location_id") && v <= 0xffffu)
			n->location_id = (unsigned)v;
		else if (!strcmp(key, "drm_render_minor") && v < 1u << 20)
			n->render_minor = (int)v;
	}
	return gpu ? 0 : -ENOENT;
}

int amd_kfd_read(struct dralet_backend_ctx *ctx, struct amd_kfd *ret)
{
	char path[4096], rel[320], text[8192];
	struct dirent *e;
	DIR *d;

	*ret = (struct amd_kfd){ 0 };
	if (dralet_root_path(ctx, DRALET_ROOT_SYS, TOPOLOGY, path, sizeof(path)) < 0 ||
	    !(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		struct amd_kfd_node n = { 0 };
		uint64_t num;

		if (!isdigit((unsigned char)e->d_name[0]) || !gpu_parse_u64(e->d_name, &num) ||
		    num > 1u << 16)
			continue;
		snprintf(rel, sizeof(rel), TOPOLOGY "/%s/properties", e->d_name);
		if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, text, sizeof(text)) < 0)
			continue;
		n.node = (unsigned)num;
		if (parse_properties(text, &n) < 0)
			continue;
		struct amd_kfd_node *nodes = realloc(ret->nodes, (ret->n + 1) * sizeof(*nodes));
		if (!nodes) {
			closedir(d);
			amd_kfd_free(ret);
			return -ENOMEM;
		}
		ret->nodes = nodes;
		ret->nodes[ret->n++] = n;
	}
	closedir(d);
	return 0;
}

void amd_kfd_free(struct amd_kfd *kfd)
{
	free(kfd->nodes);
	kfd->nodes = NULL;
	kfd->n = 0;
}

size_t amd_kfd_nodes_of(const struct amd_kfd *kfd, const struct dralet_pci_func *func,
			const struct amd_kfd_node **out, size_t max)
{
	unsigned location = func->bus << 8 | func->dev << 3 | func->fn;
	size_t count = 0;

	for (size_t i = 0; i < kfd->n; i++) {
		const struct amd_kfd_node *n = &kfd->nodes[i];
		if (n->domain != func->domain || n->location_id != location)
			continue;
		/* insertion by render minor, then node number: a stable order */
		size_t at = count < max ? count : max;
		while (at > 0 && (out[at - 1]->render_minor > n->render_minor ||
				  (out[at - 1]->render_minor == n->render_minor &&
				   out[at - 1]->node > n->node)))
			at--;
		if (at < max) {
			size_t last = count < max ? count : max - 1;
			memmove(&out[at + 1], &out[at], (last - at) * sizeof(*out));
			out[at] = n;
		}
		count++;
	}
	return count;
}
