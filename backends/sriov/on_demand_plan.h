/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV VFs on demand, without I/O: the per-PF ledger of the VFs claims
 * hold and the PF's VF count before the first of them, and what a prepare
 * or unprepare of an on-demand VF must do (on_demand.h carries it out).
 *
 * Rules (kernel Documentation/PCI/pci-iov-howto.rst; linux-devices.md 2.1):
 * a non-zero sriov_numvfs changes only through 0, which removes every VF of
 * the PF. So a VF that does not exist yet is made (0, then the policy's
 * most, so later claims find theirs made) only while no VF of the PF is
 * held by a claim; an existing VF that no claim holds is simply taken. The
 * PF gets its count back when the last claim gives its VF back.
 *
 * Ledger text (one file per PF in the driver's state directory):
 *   original <count before the first claim>
 *   vf <index> <claim uid> <namespace>/<name>
 */
#ifndef DRALET_BACKENDS_SRIOV_ON_DEMAND_PLAN_H
#define DRALET_BACKENDS_SRIOV_ON_DEMAND_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#define VFOD_HELD_MAX 256	/* the kernel's sriov_totalvfs fits in 16 bits; a PF's
				 * VFs on demand are at most this many */
#define VFOD_UID_MAX 64
#define VFOD_CLAIM_MAX 320

struct vfod_held {
	unsigned index;
	char uid[VFOD_UID_MAX];
	char claim[VFOD_CLAIM_MAX];	/* "namespace/name" */
};

struct vfod_ledger {
	bool has_original;
	unsigned original;		/* sriov_numvfs before the first claim */
	struct vfod_held held[VFOD_HELD_MAX];
	size_t n;
};

/* Parses ledger text (NULL or "": empty ledger). -EINVAL on a bad line. */
int vfod_ledger_parse(const char *text, struct vfod_ledger *ret);
/* Renders @l; the length, or -ENOSPC. */
int vfod_ledger_format(const struct vfod_ledger *l, char *buf, size_t size);

/* The claim holding VF @index, or NULL. */
const struct vfod_held *vfod_ledger_holder(const struct vfod_ledger *l, unsigned index);
/* Adds (@index, @uid) unless there (0, or -ENOSPC). */
int vfod_ledger_add(struct vfod_ledger *l, unsigned index, const char *uid, const char *claim);
/* Removes the entries of @uid for @index; true when one was there. */
bool vfod_ledger_remove(struct vfod_ledger *l, unsigned index, const char *uid);

enum vfod_action {
	VFOD_TAKE,	/* the VF exists and no other claim holds it */
	VFOD_CREATE,	/* write sriov_numvfs: 0, then .count */
	VFOD_REFUSE,	/* not now or never: .reason says why */
};

struct vfod_plan {
	enum vfod_action action;
	unsigned count;		/* VFOD_CREATE: the VFs to make */
	unsigned original;	/* the PF's count to give back after the last claim */
	char reason[640];
};

/* What preparing VF @index of PF @pf (now @num_vfs VFs, at most @max_vfs
 * on demand) for claim @uid (@claim "ns/name") needs, given ledger @l. */
void vfod_plan_prepare(const struct vfod_ledger *l, const char *pf, unsigned index,
		       unsigned num_vfs, unsigned max_vfs, const char *uid, const char *claim,
		       struct vfod_plan *ret);

/* After claim @uid gave VF @index back (removed from @l): true when the PF's
 * count must be set back to *ret_count (no claim holds a VF, and the count
 * differs from the original @fallback_original or the ledger's). */
bool vfod_plan_give_back(const struct vfod_ledger *l, unsigned num_vfs,
			 unsigned fallback_original, unsigned *ret_count);

#endif
