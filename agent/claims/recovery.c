/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/recovery.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/cdi_names.h"
#include "agent/lib/err_msg.h"

const char *recovery_kind_name(enum recovery_kind kind)
{
	static const char *const names[] = {
		[RECOVERY_KEEP] = "keep",
		[RECOVERY_REWRITE_SPEC] = "rewrite CDI spec",
		[RECOVERY_ROLLBACK] = "roll back",
		[RECOVERY_FINISH_UNPREPARE] = "finish unprepare",
		[RECOVERY_DROP_CHANGED] = "drop (device changed)",
		[RECOVERY_DROP_REBOOT] = "drop (node rebooted)",
		[RECOVERY_REMOVE_ORPHAN] = "remove orphan CDI spec",
		[RECOVERY_REBUILT] = "rebuilt from its CDI spec",
		[RECOVERY_KEEP_UNACCOUNTED] = "keep CDI spec nothing is rebuilt from",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

static bool same_string(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

bool recovery_same_device(const struct ckpt_identity *was, const struct ckpt_identity *now)
{
	if (!same_string(was->pci_address, now->pci_address))
		return false;
	if (was->pci_address &&
	    (was->vendor_id != now->vendor_id || was->device_id != now->device_id ||
	     was->subsystem_vendor_id != now->subsystem_vendor_id ||
	     was->subsystem_device_id != now->subsystem_device_id))
		return false;
	return !was->uuid || same_string(was->uuid, now->uuid);
}

/* Explains the first device of @c that is gone or changed; false when all match. */
static bool find_changed(const struct ckpt_claim *c, recovery_lookup_fn lookup, void *ud,
			 char *reason, size_t size)
{
	for (size_t i = 0; i < c->n_devices; i++) {
		const struct ckpt_device *d = &c->devices[i];
		struct ckpt_identity now = { 0 };

		if (!lookup(ud, d->pool, d->device, &now))
			return err_printf(reason, size, true, "device %s/%s is no longer on this "
					  "node", d->pool, d->device);
		if (!recovery_same_device(&d->identity, &now))
			return err_printf(reason, size, true, "device %s/%s is another device now "
					  "(was %s %04x:%04x%s%s, is %s %04x:%04x%s%s)", d->pool,
					  d->device,
					  d->identity.pci_address ? d->identity.pci_address : "-",
					  d->identity.vendor_id, d->identity.device_id,
					  d->identity.uuid ? " uuid " : "",
					  d->identity.uuid ? d->identity.uuid : "",
					  now.pci_address ? now.pci_address : "-", now.vendor_id,
					  now.device_id, now.uuid ? " uuid " : "",
					  now.uuid ? now.uuid : "");
	}
	return false;
}

static bool file_listed(char *const *files, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(files[i], name))
			return true;
	return false;
}

/* True when a spec file of @c is not among @files. */
static bool spec_missing(const struct ckpt_claim *c, const char *vendor, char *const *files,
			 size_t n)
{
	char name[512];

	for (size_t i = 0; i < c->n_devices; i++) {
		if (cdi_spec_file_name(vendor, c->devices[i].cdi_class, c->uid, name,
				       sizeof(name)) < 0)
			return true;
		if (!file_listed(files, n, name))
			return true;
	}
	return false;
}

/* True when spec file @file belongs to a claim the plan keeps. */
static bool owned(const struct checkpoint *ck, const struct recovery_plan *p, const char *vendor,
		  const char *file)
{
	char cls[256], uid[256];

	if (cdi_parse_spec_file_name(vendor, file, cls, sizeof(cls), uid, sizeof(uid)) < 0)
		return false;
	for (size_t i = 0; i < ck->n_claims; i++) {
		const struct ckpt_claim *c = ck->claims[i];
		if (strcmp(c->uid, uid) || (p->actions[i].kind != RECOVERY_KEEP &&
					    p->actions[i].kind != RECOVERY_REWRITE_SPEC))
			continue;
		for (size_t j = 0; j < c->n_devices; j++)
			if (!strcmp(c->devices[j].cdi_class, cls))
				return true;
	}
	return false;
}

int recovery_plan_build(const struct checkpoint *ck, const char *boot_id, recovery_lookup_fn lookup,
			void *userdata, const char *vendor, char *const *spec_files,
			size_t n_spec_files, struct recovery_plan **ret_plan)
{
	struct recovery_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->actions = calloc(ck->n_claims + n_spec_files + 1, sizeof(*p->actions));
	if (!p->actions) {
		free(p);
		return -ENOMEM;
	}
	p->boot_changed = boot_id && *boot_id && ck->boot_id && *ck->boot_id &&
			  strcmp(boot_id, ck->boot_id);
	for (size_t i = 0; i < ck->n_claims; i++) {
		const struct ckpt_claim *c = ck->claims[i];
		struct recovery_action *a = &p->actions[p->n_actions++];

		a->claim = i;
		if (p->boot_changed) {
			a->kind = RECOVERY_DROP_REBOOT;
			snprintf(a->reason, sizeof(a->reason), "the node rebooted (boot ID %s, "
				 "checkpoint written in boot %s)", boot_id, ck->boot_id);
		} else if (find_changed(c, lookup, userdata, a->reason, sizeof(a->reason))) {
			a->kind = RECOVERY_DROP_CHANGED;
		} else if (c->state == CKPT_PREPARE_STARTED) {
			a->kind = RECOVERY_ROLLBACK;
			snprintf(a->reason, sizeof(a->reason), "prepare did not finish");
		} else if (c->state == CKPT_UNPREPARE_STARTED) {
			a->kind = RECOVERY_FINISH_UNPREPARE;
			snprintf(a->reason, sizeof(a->reason), "unprepare did not finish");
		} else if (spec_missing(c, vendor, spec_files, n_spec_files)) {
			a->kind = RECOVERY_REWRITE_SPEC;
			snprintf(a->reason, sizeof(a->reason), "its CDI spec is missing");
		} else {
			a->kind = RECOVERY_KEEP;
		}
	}
	for (size_t i = 0; i < n_spec_files; i++) {
		struct recovery_action *a;

		if (owned(ck, p, vendor, spec_files[i]))
			continue;
		a = &p->actions[p->n_actions++];
		a->kind = RECOVERY_REMOVE_ORPHAN;
		a->file = spec_files[i];
		snprintf(a->reason, sizeof(a->reason), "no prepared claim owns it");
	}
	*ret_plan = p;
	return 0;
}

void recovery_plan_free(struct recovery_plan *plan)
{
	if (!plan)
		return;
	free(plan->actions);
	free(plan);
}
