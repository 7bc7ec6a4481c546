/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sriov/prepared.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/prepare.h>

#include "agent/claims/checkpoint_file.h"
#include "agent/claims/claims_lock.h"
#include "agent/lib/err_msg.h"

int sriov_prepared_from_checkpoint(const struct checkpoint *ck, struct sriov_prepared *p)
{
	for (size_t i = 0; i < ck->n_claims; i++) {
		const struct ckpt_claim *c = ck->claims[i];
		for (size_t j = 0; j < c->n_devices; j++) {
			const struct ckpt_device *d = &c->devices[j];
			struct sriov_prepared_vf vf = { .in_flight = c->state != CKPT_PREPARE_COMPLETED };
			int r;

			if (!d->identity.pci_address || d->admin_access)
				continue;	/* monitoring access takes nothing */
			snprintf(vf.address, sizeof(vf.address), "%s", d->identity.pci_address);
			snprintf(vf.claim, sizeof(vf.claim), "%s/%s", c->namespace_, c->name);
			snprintf(vf.driver, sizeof(vf.driver), "%s", ck->driver);
			if ((r = sriov_prepared_add(p, &vf)) < 0)
				return r;
			/* a VF made on demand is published under its PF (the device's
			 * identity); the VF it took is in the undo state */
			const char *taken = dralet_undo_get(&d->undo, "pciAddress");
			if (taken && strcmp(taken, vf.address)) {
				snprintf(vf.address, sizeof(vf.address), "%s", taken);
				if ((r = sriov_prepared_add(p, &vf)) < 0)
					return r;
			}
		}
	}
	return 0;
}

int sriov_prepared_load_dir(const char *state_dir, struct sriov_prepared *p, char *err,
			    size_t errlen)
{
	struct checkpoint *ck = NULL;
	struct err_msg why = { "" };
	int r = checkpoint_file_load(state_dir, &ck, ERR_MSG_ARGS(&why));

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return err_printf(err, errlen, r, "%s/%s: %s", state_dir, CHECKPOINT_FILE_NAME,
				  why.text[0] ? why.text : strerror(-r));
	r = sriov_prepared_from_checkpoint(ck, p);
	checkpoint_free(ck);
	return r;
}

int sriov_prepared_load_drivers(const char *plugins_dir, const char *const *drivers, size_t n,
				struct sriov_prepared *p, char *err, size_t errlen)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		char dir[4096];
		if (snprintf(dir, sizeof(dir), "%s/%s", plugins_dir, drivers[i]) >= (int)sizeof(dir))
			return -ENAMETOOLONG;
		r = sriov_prepared_load_dir(dir, p, err, errlen);
	}
	return r;
}

int sriov_prepared_lock_drivers(const char *plugins_dir, const char *const *drivers, size_t n,
				bool wait, struct claims_lock ***ret_locks,
				struct sriov_prepared *p, char *err, size_t errlen)
{
	char **dirs = calloc(n + 1, sizeof(*dirs));
	struct claims_lock **locks = NULL;
	int r = dirs ? 0 : -ENOMEM;

	for (size_t i = 0; !r && i < n; i++)
		if (asprintf(&dirs[i], "%s/%s", plugins_dir, drivers[i]) < 0) {
			dirs[i] = NULL;
			r = -ENOMEM;
		}
	if (!r && (r = claims_locks_take((const char *const *)dirs, n, wait, &locks)) < 0 &&
	    r != -EWOULDBLOCK)
		err_printf(err, errlen, r, "cannot lock the claims of the drivers in %s: %s",
			   plugins_dir, strerror(-r));
	for (size_t i = 0; !r && i < n; i++)
		r = sriov_prepared_load_dir(dirs[i], p, err, errlen);
	for (size_t i = 0; dirs && i < n; i++)
		free(dirs[i]);
	free(dirs);
	if (r < 0) {
		claims_locks_free(locks, n);
		return r;
	}
	*ret_locks = locks;
	return 0;
}
