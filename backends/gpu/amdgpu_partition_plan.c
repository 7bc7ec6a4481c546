/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which compute partitions of an AMD Instinct GPU dralet offers, and what
 * each owns (amdgpu_partition.h). Pure functions: no I/O.
 *
 * Validity follows drivers/gpu/drm/amd/amdgpu/aqua_vanjaram.c
 * (__aqua_vanjaram_is_valid_mode, Linux 6.12): SPX needs one memory
 * partition (NPS1); TPX wants XCCs divisible by 3 and NPS1; QPX at least
 * two XCCs per partition and NPS1 or NPS4; CPX more than one XCC, NPS1 or
 * NPS4, and XCCs divisible by the memory partitions. DPX needs XCCs
 * divisible by 4; kernels disagree on DPX under NPS4 (some allow up to two
 * memory partitions, later ones all but eight), so dralet offers DPX under
 * NPS1 (and NPS2) only.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "amdgpu_partition.h"

static unsigned memory_partitions(const char *memory)
{
	unsigned n;
	char tail;

	if (!memory || strncasecmp(memory, "nps", 3) || sscanf(memory + 3, "%u%c", &n, &tail) != 1)
		return 0;
	return n;
}

unsigned amd_mode_count(const char *mode, unsigned num_xcc)
{
	if (!mode)
		return 0;
	if (!strcasecmp(mode, "spx"))
		return 1;
	if (!strcasecmp(mode, "dpx"))
		return 2;
	if (!strcasecmp(mode, "tpx"))
		return 3;
	if (!strcasecmp(mode, "qpx"))
		return 4;
	if (!strcasecmp(mode, "cpx"))
		return num_xcc;
	return 0;
}

bool amd_mode_valid(const char *mode, const char *memory, unsigned num_xcc)
{
	unsigned nps = memory_partitions(memory);

	if (!mode || !nps || !num_xcc)
		return false;
	if (!strcasecmp(mode, "spx"))
		return nps == 1;
	if (!strcasecmp(mode, "dpx"))
		return (nps == 1 || nps == 2) && num_xcc % 4 == 0;
	if (!strcasecmp(mode, "tpx"))
		return nps == 1 && num_xcc % 3 == 0;
	if (!strcasecmp(mode, "qpx"))
		return (nps == 1 || nps == 4) && num_xcc / 4 >= 2 && num_xcc % 4 == 0;
	if (!strcasecmp(mode, "cpx"))
		return num_xcc > 1 && (nps == 1 || nps == 4) && num_xcc % nps == 0;
	return false;
}

/* The next word of a list like "SPX, DPX, QPX, CPX" into @word (lower
 * case); the rest after it, NULL at the end. */
static const char *next_word(const char *s, char *word, size_t size)
{
	size_t n = 0;

	while (*s && (*s == ',' || isspace((unsigned char)*s)))
		s++;
	if (!*s)
		return NULL;
	for (; *s && *s != ',' && !isspace((unsigned char)*s); s++)
		if (n + 1 < size)
			word[n++] = (char)tolower((unsigned char)*s);
	word[n] = '\0';
	return s;
}

int amd_partition_plan(const struct amd_partition_facts *f, struct amd_partition_plan *ret)
{
	struct amd_partition_plan plan = { .num_xcc = f->num_xcc };
	const char *s = f->available;
	char word[16];

	if (!f->compute || strcmp(f->compute, "spx") || !f->num_xcc || f->num_xcc > AMD_XCC_MAX ||
	    !s)
		return -ENOENT;
	while ((s = next_word(s, word, sizeof(word))) && plan.n_modes < AMD_MODES_MAX) {
		unsigned count = amd_mode_count(word, f->num_xcc);
		bool seen = false;

		for (size_t i = 0; i < plan.n_modes; i++)
			seen |= !strcmp(plan.modes[i].name, word);
		if (seen || count < 2 || f->num_xcc % count || strlen(word) >= sizeof(plan.modes[0].name) ||
		    !amd_mode_valid(word, f->memory, f->num_xcc))
			continue;
		snprintf(plan.modes[plan.n_modes].name, sizeof(plan.modes[0].name), "%s", word);
		plan.modes[plan.n_modes++].count = count;
	}
	if (!plan.n_modes)
		return -ENOENT;
	*ret = plan;
	return 0;
}

void amd_partition_xccs(const struct amd_mode *mode, unsigned num_xcc, unsigned index,
			unsigned *first, unsigned *n)
{
	unsigned per = mode->count ? num_xcc / mode->count : 0;

	*first = index * per;
	*n = per;
}

int amd_memory_partition_check(const char *current, const char *wanted, char *why,
			       size_t size)
{
	if (!wanted || !*wanted || (current && !strcasecmp(current, wanted)))
		return 0;
	snprintf(why, size, "memory partition %.16s was asked for, the GPU is in %.16s: changing "
		 "the memory partition mode takes an amdgpu driver reload (the new mode applies "
		 "when the driver loads again), which dralet never does; set it with amd-smi and "
		 "reload the driver while the GPU is drained",
		 wanted, current && *current ? current : "an unknown mode");
	return -EOPNOTSUPP;
}
