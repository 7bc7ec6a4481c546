/* SPDX-License-Identifier: Apache-2.0 */
#include "on_demand_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vfod_ledger_parse(const char *text, struct vfod_ledger *ret)
{
	const char *line = text;

	memset(ret, 0, sizeof(*ret));
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[512], uid[VFOD_UID_MAX], claim[VFOD_CLAIM_MAX];
		unsigned v;
		int n = 0;

		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = end ? end + 1 : NULL;
		if (!len)
			continue;
		if (sscanf(buf, "original %u%n", &v, &n) == 1 && !buf[n]) {
			ret->has_original = true;
			ret->original = v;
		} else if (sscanf(buf, "vf %u %63s %319s%n", &v, uid, claim, &n) == 3 && !buf[n]) {
			if (vfod_ledger_add(ret, v, uid, claim) < 0)
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

int vfod_ledger_format(const struct vfod_ledger *l, char *buf, size_t size)
{
	size_t o = 0;
	int w;

	buf[0] = '\0';
	if (l->has_original) {
		w = snprintf(buf, size, "original %u\n", l->original);
		if (w < 0 || (size_t)w >= size)
			return -ENOSPC;
		o = (size_t)w;
	}
	for (size_t i = 0; i < l->n; i++) {
		w = snprintf(buf + o, size - o, "vf %u %s %s\n", l->held[i].index, l->held[i].uid,
			     l->held[i].claim);
		if (w < 0 || (size_t)w >= size - o)
			return -ENOSPC;
		o += (size_t)w;
	}
	return (int)o;
}

const struct vfod_held *vfod_ledger_holder(const struct vfod_ledger *l, unsigned index)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->held[i].index == index)
			return &l->held[i];
	return NULL;
}

/* A token without blanks (uids and "ns/name" have none). */
static bool token_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n && n < max && !strpbrk(s, " \t\n");
}

int vfod_ledger_add(struct vfod_ledger *l, unsigned index, const char *uid, const char *claim)
{
	struct vfod_held *h;

	for (size_t i = 0; i < l->n; i++)
		if (l->held[i].index == index && !strcmp(l->held[i].uid, uid))
			return 0;
	if (l->n == VFOD_HELD_MAX || !token_ok(uid, VFOD_UID_MAX) ||
	    !token_ok(claim, VFOD_CLAIM_MAX))
		return l->n == VFOD_HELD_MAX ? -ENOSPC : -EINVAL;
	h = &l->held[l->n++];
	h->index = index;
	snprintf(h->uid, sizeof(h->uid), "%s", uid);
	snprintf(h->claim, sizeof(h->claim), "%s", claim);
	return 0;
}

bool vfod_ledger_remove(struct vfod_ledger *l, unsigned index, const char *uid)
{
	bool found = false;
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (l->held[i].index == index && !strcmp(l->held[i].uid, uid)) {
			found = true;
			continue;
		}
		l->held[kept++] = l->held[i];
	}
	l->n = kept;
	return found;
}

void vfod_plan_prepare(const struct vfod_ledger *l, const char *pf, unsigned index,
		       unsigned num_vfs, unsigned max_vfs, const char *uid, const char *claim,
		       struct vfod_plan *ret)
{
	const struct vfod_held *h = vfod_ledger_holder(l, index);

	*ret = (struct vfod_plan){ .action = VFOD_REFUSE,
				   .original = l->has_original ? l->original : num_vfs };
	if (index >= max_vfs) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: VF %u is beyond the %u VFs its "
			 "policy makes on demand (numVfs)", pf, index, max_vfs);
		return;
	}
	if (h && strcmp(h->uid, uid)) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: VF %u is held by claim %s",
			 pf, index, h->claim);
		return;
	}
	if (h || index < num_vfs) {
		ret->action = VFOD_TAKE;	/* made before, free (or this claim's already) */
		return;
	}
	(void)claim;
	for (size_t i = 0; i < l->n; i++) {
		snprintf(ret->reason, sizeof(ret->reason), "PF %s: VF %u does not exist yet "
			 "(sriov_numvfs is %u), and making it re-creates every VF of the PF (the "
			 "kernel changes a VF count only through 0), which would remove VF %u "
			 "prepared for claim %s; VF %u can be made once no VF of the PF is "
			 "prepared (request a VF below %u meanwhile)", pf, index, num_vfs,
			 l->held[i].index, l->held[i].claim, index, num_vfs);
		return;
	}
	ret->action = VFOD_CREATE;
	ret->count = max_vfs;
}

bool vfod_plan_give_back(const struct vfod_ledger *l, unsigned num_vfs,
			 unsigned fallback_original, unsigned *ret_count)
{
	unsigned original = l->has_original ? l->original : fallback_original;

	if (l->n || num_vfs == original)
		return false;
	*ret_count = original;
	return true;
}
