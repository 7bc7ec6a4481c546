/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker side of the claims engine: backend calls under device locks,
 * CDI specs, and the checkpoint changes around them, in the order that makes
 * a crash at any point recoverable (docs/claims.md, "Prepare").
 */
#include "agent/claims/engine_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

#include "agent/claims/cdi_files.h"
#include "agent/claims/cdi_names.h"
#include "agent/claims/cdi_spec.h"
#include "agent/claims/device_metadata.h"
#include "agent/claims/config_select.h"
#include "agent/claims/crash.h"
#include "agent/lib/log.h"
#include "agent/core/backend_call.h"
#include "agent/core/backend_ctx.h"

int claims_engine_check_health(struct claims_engine *e, struct dralet_device *dev, char *why,
			       size_t why_size)
{
	struct engine_device *d = engine_find_device(e, dralet_device_name(dev));

	if (!d || d->dev != dev)
		return -ENODEV;
	return backend_call_health(dev, &d->lock, why, why_size);
}

int engine_unprepare_devices(struct claims_engine *e, const struct ckpt_claim *c, bool all,
			     char *err, size_t errlen)
{
	struct dralet_claim_ref ref = { c->uid, c->namespace_, c->name };
	int first = 0;

	for (size_t i = c->n_devices; i-- > 0;) {
		const struct ckpt_device *cd = &c->devices[i];
		struct engine_device *d;
		struct err_msg cause;
		int r;

		if (!all && !cd->prepared)
			continue;
		d = engine_find_device(e, cd->device);
		if (!d) {
			log_warn("driver %s: claim %s/%s: device %s is gone; nothing to undo on it",
				 e->driver, c->namespace_, c->name, cd->device);
			continue;
		}
		r = backend_call_unprepare(d->dev, &d->lock, &ref, &cd->undo, ERR_MSG_ARGS(&cause));
		if (r < 0 && !first)
			first = err_printf(err, errlen, r, "unprepare of device %s/%s failed: %s",
					   cd->pool, cd->device, cause.text);
	}
	return first;
}

/* ---- CDI specs ---- */

static int spec_file(struct claims_engine *e, const struct ckpt_claim *c, const char *cls,
		     char *buf, size_t size)
{
	return cdi_spec_file_name(e->vendor, cls, c->uid, buf, size);
}

/* True when an earlier device of @c has the class of device @i. */
static bool class_seen(const struct ckpt_claim *c, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(c->devices[j].cdi_class, c->devices[i].cdi_class))
			return true;
	return false;
}

int engine_write_specs(struct claims_engine *e, const struct ckpt_claim *c, bool only_missing,
		       char *err, size_t errlen)
{
	struct cdi_spec_device *devs = calloc(c->n_devices + 1, sizeof(*devs));
	char (*names)[256] = calloc(c->n_devices + 1, sizeof(*names));
	int r = devs && names ? 0 : -ENOMEM;

	for (size_t i = 0; !r && i < c->n_devices; i++) {
		const char *cls = c->devices[i].cdi_class;
		struct json_object *spec = NULL;
		char file[512];
		size_t n = 0;

		if (class_seen(c, i))
			continue;
		if ((r = spec_file(e, c, cls, file, sizeof(file))) < 0) {
			err_printf(err, errlen, r, "no valid CDI spec file name for class %s", cls);
			break;
		}
		r = 0;
		if (only_missing && cdi_files_exists(e->cdi_dir, file))
			continue;
		for (size_t j = i; j < c->n_devices; j++) {
			if (strcmp(c->devices[j].cdi_class, cls))
				continue;
			if (cdi_device_name(c->uid, c->devices[j].device, c->devices[j].share_id,
					    names[n], sizeof(names[n])) < 0) {
				r = err_printf(err, errlen, -EINVAL, "\"%s-%s\" is no valid CDI "
					       "device name", c->uid, c->devices[j].device);
				break;
			}
			devs[n].name = names[n];
			devs[n].edits = &c->devices[j].edits;
			n++;
		}
		if (r < 0)
			break;
		r = cdi_spec_render(e->vendor, cls, devs, n, &spec, err, errlen);
		if (r < 0)
			break;
		r = cdi_files_write(e->cdi_dir, file, spec);
		json_object_put(spec);
		if (r < 0)
			err_printf(err, errlen, r, "cannot write CDI spec %s/%s: %s", e->cdi_dir,
				   file, strerror(-r));
	}
	if (r == -ENOMEM && !devs)
		err_printf(err, errlen, r, "out of memory");
	free(devs);
	free(names);
	return r;
}

int engine_remove_claim_files(struct claims_engine *e, const struct ckpt_claim *c)
{
	int first = 0;

	for (size_t i = 0; i < c->n_devices; i++) {
		char file[512];
		int r;

		if (class_seen(c, i) || spec_file(e, c, c->devices[i].cdi_class, file, sizeof(file)) < 0)
			continue;
		r = cdi_files_remove(e->cdi_dir, file);
		if (r < 0) {
			log_error("driver %s: cannot remove CDI spec %s/%s: %s", e->driver, e->cdi_dir,
				  file, strerror(-r));
			if (!first)
				first = r;
		}
	}
	/* metadata files hold no device: one left behind is only logged, and the
	 * next start removes it (engine_recover.c) */
	if (c->namespace_ && *c->namespace_ && c->name && *c->name) {
		const char **requests = NULL;
		size_t n = 0;
		int r;

		for (size_t i = 0; i < c->n_devices; i++)
			n += c->devices[i].n_requests;
		/* by name when the requests are known (no listing); else the whole directory */
		if (n && (requests = calloc(n, sizeof(*requests)))) {
			n = 0;
			for (size_t i = 0; i < c->n_devices; i++)
				for (size_t j = 0; j < c->devices[i].n_requests; j++)
					requests[n++] = c->devices[i].requests[j];
			r = device_metadata_remove_requests(e->state_dir, c->namespace_, c->name,
							    requests, n);
			free(requests);
		} else {
			r = device_metadata_remove(e->state_dir, c->namespace_, c->name);
		}

		if (r < 0)
			log_error("driver %s: cannot remove the device metadata of claim %s/%s: %s",
				  e->driver, c->namespace_, c->name, strerror(-r));
	}
	return first;
}

/* ---- device metadata (device_metadata.h) ---- */

static struct device_metadata_claim metadata_claim(const struct claims_engine *e,
						   const struct ckpt_claim *c,
						   const struct claim_plan *p)
{
	return (struct device_metadata_claim){ e->driver, c->namespace_, c->name, c->uid,
					       p->pod_claim_name };
}

/* Mounts the metadata file of every request device @i serves into the containers. */
static int add_metadata_mounts(struct claims_engine *e, const struct ckpt_claim *c,
			       const struct claim_plan *p, const struct ckpt_device *cd,
			       struct dralet_edits *edits)
{
	struct device_metadata_claim mc = metadata_claim(e, c, p);

	for (size_t i = 0; i < cd->n_requests; i++) {
		char host[4096], container[4096];
		int r = device_metadata_host_path(e->state_dir, &mc, cd->requests[i], host,
						  sizeof(host));

		if (r < 0 || (r = device_metadata_container_path(&mc, cd->requests[i], container,
								  sizeof(container))) < 0 ||
		    (r = dralet_edits_add_mount(edits, host, container, "ro,nosuid,nodev,bind")) < 0)
			return r;
	}
	return 0;
}

/* Writes one metadata file per request of the claim, with the devices it got. */
static int write_metadata(struct claims_engine *e, struct op *op, const struct ckpt_claim *c,
			  char *err, size_t errlen)
{
	struct device_metadata_claim mc = metadata_claim(e, c, op->plan);
	struct device_metadata_device *devs = calloc(c->n_devices + 1, sizeof(*devs));
	int r = devs ? 0 : -ENOMEM;

	for (size_t i = 0; !r && i < c->n_devices; i++)
		for (size_t k = 0; !r && k < c->devices[i].n_requests; k++) {
			const char *request = c->devices[i].requests[k];
			bool done = false;
			size_t n = 0;
			char *text;

			/* each request once, at its first device */
			for (size_t j = 0; j < i && !done; j++)
				for (size_t m = 0; m < c->devices[j].n_requests && !done; m++)
					done = !strcmp(c->devices[j].requests[m], request);
			if (done)
				continue;
			for (size_t j = i; j < c->n_devices; j++)
				for (size_t m = 0; m < c->devices[j].n_requests; m++)
					if (!strcmp(c->devices[j].requests[m], request)) {
						devs[n++] = (struct device_metadata_device){
							c->devices[j].pool, op->targets[j]->dev,
							c->devices[j].share_id };
						break;
					}
			if (!(text = device_metadata_render(&mc, request, devs, n))) {
				r = -ENOMEM;
				break;
			}
			r = device_metadata_write(e->state_dir, &mc, request, text, e->metadata_sync);
			free(text);
			if (r < 0)
				err_printf(err, errlen, r, "cannot write the device metadata of "
					   "request %s below %s/" DEVICE_METADATA_HOST_SUBDIR
					   ": %s", request, e->state_dir, strerror(-r));
		}
	if (r == -ENOMEM)
		err_printf(err, errlen, r, "out of memory");
	free(devs);
	return r;
}

/* ---- answers ---- */

static int add_base_name(struct op_device *d, const char *request)
{
	char base[256], *copy, **names;

	if (config_base_request(request, base, sizeof(base)) < 0)
		return -EINVAL;
	for (size_t i = 0; i < d->n_request_names; i++)
		if (!strcmp(d->request_names[i], base))
			return 0;
	names = realloc(d->request_names, (d->n_request_names + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	d->request_names = names;
	if (!(copy = strdup(base)))
		return -ENOMEM;
	d->request_names[d->n_request_names++] = copy;
	return 0;
}

/* Fills the op's answer from its checkpoint entry. */
static int answer_from(struct op *op, const struct ckpt_claim *c)
{
	op->devices = calloc(c->n_devices + 1, sizeof(*op->devices));
	if (!op->devices)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_devices; i++) {
		const struct ckpt_device *cd = &c->devices[i];
		struct op_device *d = &op->devices[op->n_devices++];

		d->pool = strdup(cd->pool);
		d->device = strdup(cd->device);
		d->cdi_id = strdup(cd->cdi_id);
		if (!d->pool || !d->device || !d->cdi_id ||
		    (cd->share_id && !(d->share_id = strdup(cd->share_id))))
			return -ENOMEM;
		for (size_t j = 0; j < cd->n_requests; j++)
			if (add_base_name(d, cd->requests[j]) < 0)
				return -ENOMEM;
	}
	return 0;
}

static void answer(struct op *op, const struct ckpt_claim *c)
{
	if (answer_from(op, c) < 0)
		op_fail(op, "out of memory building the answer");
}

/* ---- the checkpoint entry of a plan ---- */

static void env_name_of(const char *device, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "DRALET_DEVICE_");

	for (const char *p = device; *p && n + 1 < size; p++)
		buf[n++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
	buf[n] = '\0';
}

/* DRALET_SHARE_<DEVICE>=<shareID>: the container can tell its share, and a
 * lost checkpoint is rebuilt with it (recovery_rebuild.c). */
static int add_share_env(const struct ckpt_device *cd, struct dralet_edits *edits)
{
	char device_env[128], env[160];

	env_name_of(cd->device, device_env, sizeof(device_env));
	snprintf(env, sizeof(env), "DRALET_SHARE_%s", device_env + strlen("DRALET_DEVICE_"));
	return dralet_edits_add_env(edits, env, cd->share_id);
}

static int dup_identity(struct ckpt_identity *dst, const struct dralet_device *dev)
{
	struct ckpt_identity id;

	engine_device_identity(dev, &id);
	*dst = id;
	dst->pci_address = id.pci_address ? strdup(id.pci_address) : NULL;
	dst->uuid = id.uuid ? strdup(id.uuid) : NULL;
	if ((id.pci_address && !dst->pci_address) || (id.uuid && !dst->uuid))
		return -ENOMEM;
	return 0;
}

static struct ckpt_claim *entry_from_plan(struct claims_engine *e, struct op *op)
{
	const struct claim_plan *p = op->plan;
	struct ckpt_claim *c = calloc(1, sizeof(*c));
	char id[768], name[512];

	if (!c)
		return NULL;
	c->uid = strdup(p->uid);
	c->namespace_ = strdup(p->namespace_);
	c->name = strdup(p->name);
	c->state = CKPT_PREPARE_STARTED;
	c->devices = calloc(p->n_devices + 1, sizeof(*c->devices));
	if (!c->uid || !c->namespace_ || !c->name || !c->devices)
		goto fail;
	for (size_t i = 0; i < p->n_devices; i++) {
		const struct claim_plan_device *pd = &p->devices[i];
		struct ckpt_device *cd = &c->devices[c->n_devices++];
		const struct dralet_backend *b = dralet_device_ctx(op->targets[i]->dev)->backend;

		cd->pool = strdup(pd->pool);
		cd->device = strdup(pd->device);
		cd->admin_access = pd->admin_access;
		cd->cdi_class = strdup(cdi_class_of_family(b->family));
		cd->requests = calloc(pd->n_requests + 1, sizeof(*cd->requests));
		if (!cd->pool || !cd->device || !cd->cdi_class || !cd->requests)
			goto fail;
		for (size_t j = 0; j < pd->n_requests; j++)
			if (!(cd->requests[cd->n_requests++] = strdup(pd->requests[j])))
				goto fail;
		if ((pd->share_id && !(cd->share_id = strdup(pd->share_id))) ||
		    ckpt_consumed_copy(&cd->consumed, &cd->n_consumed, pd->consumed,
				       pd->n_consumed) < 0)
			goto fail;
		if (cdi_device_name(c->uid, cd->device, cd->share_id, name, sizeof(name)) < 0 ||
		    cdi_qualified_name(e->vendor, cd->cdi_class, name, id, sizeof(id)) < 0 ||
		    !(cd->cdi_id = strdup(id)) || dup_identity(&cd->identity, op->targets[i]->dev) < 0)
			goto fail;
	}
	return c;
fail:
	ckpt_claim_free(c);
	return NULL;
}

/* ---- prepare ---- */

static int sync_state(struct claims_engine *e, char *err, size_t errlen)
{
	int r = claims_state_sync(e->state);

	if (r < 0)
		err_printf(err, errlen, r, "cannot write the checkpoint in %s: %s", e->state_dir,
			   strerror(-r));
	return r;
}

/*
 * Removes the claim's entry, durably: the entry leaves memory only once a
 * checkpoint without it is on disk. When that write fails, the entry goes
 * back, as @keep_as, so memory and file agree, the devices stay reserved and
 * the kubelet's retry (or the next start) does the work again. 0, or the
 * write's -errno with the cause in @err.
 */
static int remove_entry(struct claims_engine *e, const char *uid, enum ckpt_state keep_as,
			char *err, size_t errlen)
{
	struct ckpt_claim *c;
	int r;

	claims_state_lock(e->state);
	c = checkpoint_take(claims_state_checkpoint(e->state), uid);
	if (c)
		claims_state_changed(e->state, c);
	claims_state_unlock(e->state);
	if (!c)
		return 0;
	r = sync_state(e, err, errlen);
	if (r == 0) {
		ckpt_claim_free(c);
		return 0;
	}
	claims_state_lock(e->state);
	c->state = keep_as;
	/* the array had room for it a moment ago: realloc to that size again */
	if (checkpoint_add(claims_state_checkpoint(e->state), c) < 0) {
		log_error("driver %s: claim %s: out of memory keeping its entry after a failed "
			  "checkpoint write", e->driver, uid);
		ckpt_claim_free(c);
		c = NULL;
	}
	claims_state_changed(e->state, c);
	claims_state_unlock(e->state);
	return r;
}

/*
 * A prepare failed after PrepareStarted: undo what was prepared, remove the
 * spec and the entry. When undoing fails, the entry stays (PrepareStarted)
 * so the next prepare of the claim or the next start rolls back again.
 */
static void roll_back(struct claims_engine *e, struct op *op, struct ckpt_claim *c,
		      const char *cause)
{
	struct err_msg undo_err = { "" };
	int r = engine_unprepare_devices(e, c, false, ERR_MSG_ARGS(&undo_err));

	engine_remove_claim_files(e, c);
	if (r < 0) {
		op_fail(op, "%s; undoing the devices prepared before failed too (%s); it is "
			  "retried on the next prepare", cause, undo_err.text);
		return;
	}
	if (remove_entry(e, op->uid, CKPT_PREPARE_STARTED, ERR_MSG_ARGS(&undo_err)) < 0) {
		op_fail(op, "%s; rolled back, but %s: its entry stays until the next prepare "
			  "of it", cause, undo_err.text);
		return;
	}
	op_fail(op, "%s", cause);
}

/* An entry left by an earlier failure: undo it before preparing again. */
static int clear_stale_entry(struct claims_engine *e, struct op *op)
{
	struct ckpt_claim *stale;
	struct err_msg cause = { "" };
	int r;

	claims_state_lock(e->state);
	stale = checkpoint_find(claims_state_checkpoint(e->state), op->uid);
	claims_state_unlock(e->state);
	if (!stale)
		return 0;
	r = engine_unprepare_devices(e, stale, true, ERR_MSG_ARGS(&cause));
	if (r < 0) {
		op_fail(op, "an earlier prepare or unprepare of it cannot be undone: %s",
			cause.text);
		return r;
	}
	engine_remove_claim_files(e, stale);
	r = remove_entry(e, op->uid, stale->state, ERR_MSG_ARGS(&cause));
	if (r < 0)
		op_fail(op, "an earlier prepare or unprepare of it was undone, but %s", cause.text);
	return r;
}

/*
 * The claim's checkpoint entry is written ahead of the first change to the
 * node: when a backend records undo state (dralet_undo_set, called before it
 * changes a device), the entry — PrepareStarted, with that undo state — is
 * on disk before the call returns. A prepare whose backends record nothing
 * changes nothing on the node, so its entry is written once, completed.
 */
struct write_ahead {
	struct claims_engine *e;
	struct ckpt_claim *c;
	struct ckpt_device *cd;
	bool *added;
};

static int add_entry(struct claims_engine *e, struct ckpt_claim *c, bool *added)
{
	int r = 0;

	if (!*added) {
		r = checkpoint_add(claims_state_checkpoint(e->state), c);
		*added = r == 0;
	}
	return r;
}

static int persist_undo(void *userdata, const struct dralet_undo *undo)
{
	struct write_ahead *wa = userdata;
	struct err_msg cause;
	int r;

	claims_state_lock(wa->e->state);
	r = add_entry(wa->e, wa->c, wa->added);
	if (r == 0)
		r = undo_copy(&wa->cd->undo, undo);
	if (r == 0)
		claims_state_changed(wa->e->state, wa->c);
	claims_state_unlock(wa->e->state);
	if (r == 0)
		r = sync_state(wa->e, ERR_MSG_ARGS(&cause));
	if (r < 0)
		log_error("driver %s: claim %s/%s: cannot record the undo state of %s: %s",
			  wa->e->driver, wa->c->namespace_, wa->c->name, wa->cd->device,
			  strerror(-r));
	else
		claims_crash_point("prepare-undo-recorded");
	return r;
}

/* Undoes what was prepared of an entry that never reached the checkpoint. */
static void drop_unwritten(struct claims_engine *e, struct op *op, struct ckpt_claim *c,
			   const char *cause)
{
	struct err_msg undo_err = { "" };

	/* nothing recorded undo state, so nothing changed; the calls are for
	 * backends that keep per-claim bookkeeping */
	engine_unprepare_devices(e, c, false, ERR_MSG_ARGS(&undo_err));
	engine_remove_claim_files(e, c);
	ckpt_claim_free(c);
	op_fail(op, "%s", cause);
}

void engine_work_prepare(struct claims_engine *e, struct op *op)
{
	const struct claim_plan *p = op->plan;
	char msg[ERR_MSG_MAX + 256];
	struct err_msg cause = { "" };
	struct ckpt_claim *c;
	bool added = false;
	int r;

	if (clear_stale_entry(e, op) < 0)
		return;
	/* configs first: an invalid or refused one touches nothing */
	for (size_t i = 0; i < p->n_devices; i++) {
		const struct claim_plan_device *pd = &p->devices[i];
		const struct dralet_backend *b = dralet_device_ctx(op->targets[i]->dev)->backend;
		const struct dralet_config_key *refused;

		if (!pd->config)
			continue;
		refused = config_refused_key(b->admin_config_keys, pd->claim_keys, pd->n_claim_keys,
					     pd->admin_access);
		if (refused) {
			op_fail(op, "config for device %s/%s (request %s): the claim's own config "
				  "sets \"%s\", which %s; only a DeviceClass config may set it (or "
				  "allow it with " CONFIG_CLAIM_SETTABLE "), or a request with "
				  "adminAccess", pd->pool, pd->device, pd->requests[0], refused->name,
				  refused->why);
			return;
		}
		if (backend_call_validate(op->targets[i]->dev, pd->config,
					  ERR_MSG_ARGS(&cause)) < 0) {
			op_fail(op, "invalid config for device %s/%s (request %s): %s", pd->pool,
				  pd->device, pd->requests[0], cause.text);
			return;
		}
	}
	if (!(c = entry_from_plan(e, op))) {
		op_fail(op, "out of memory");
		return;
	}
	claims_crash_point("prepare-started");

	for (size_t i = 0; i < c->n_devices; i++) {
		struct ckpt_device *cd = &c->devices[i];
		struct write_ahead wa = { e, c, cd, &added };
		struct dralet_edits edits = { 0 };
		struct dralet_undo undo = { .persist = persist_undo, .persist_userdata = &wa };
		struct dralet_prepare_req req = {
			.claim = { c->uid, c->namespace_, c->name },
			.request = cd->requests[0],
			.admin_access = cd->admin_access,
			.config = p->devices[i].config,
			.edits = &edits,
			.undo = &undo,
			.share_id = cd->share_id,
			.consumed = cd->consumed,
			.n_consumed = cd->n_consumed,
		};
		char env[128], value[768];

		r = backend_call_prepare(op->targets[i]->dev, &op->targets[i]->lock, &req,
					 ERR_MSG_ARGS(&cause));
		undo.persist = NULL;
		if (r < 0) {
			/* a failing prepare cleans up after itself (backend.h): nothing to undo */
			edits_clear(&edits);
			undo_clear(&undo);
			snprintf(msg, sizeof(msg), "device %s/%s: %s", cd->pool, cd->device,
				 cause.text);
			if (added)
				roll_back(e, op, c, msg);
			else
				drop_unwritten(e, op, c, msg);
			return;
		}
		env_name_of(cd->device, env, sizeof(env));
		snprintf(value, sizeof(value), "%s/%s/%s", e->driver, cd->pool, cd->device);
		r = dralet_edits_add_env(&edits, env, value);
		if (!r && cd->share_id)
			r = add_share_env(cd, &edits);
		if (!r && cd->admin_access)
			r = dralet_edits_add_env(&edits, "DRA_ADMIN_ACCESS", "true");
		if (!r)
			r = add_metadata_mounts(e, c, p, cd, &edits);
		/* from here on the device is prepared and must be undone on failure */
		claims_state_lock(e->state);
		cd->prepared = true;
		cd->edits = edits;
		undo_clear(&cd->undo);
		cd->undo = undo;
		if (added)
			claims_state_changed(e->state, c);
		claims_state_unlock(e->state);
		if (r < 0) {
			snprintf(msg, sizeof(msg), "device %s/%s: cannot add the agent's container "
				 "edits: %s", cd->pool, cd->device, strerror(-r));
			if (added)
				roll_back(e, op, c, msg);
			else
				drop_unwritten(e, op, c, msg);
			return;
		}
		claims_crash_point("prepare-device");
	}

	if (c->n_devices && (write_metadata(e, op, c, ERR_MSG_ARGS(&cause)) < 0 ||
			     engine_write_specs(e, c, false, ERR_MSG_ARGS(&cause)) < 0)) {
		if (added)
			roll_back(e, op, c, cause.text);
		else
			drop_unwritten(e, op, c, cause.text);
		return;
	}
	claims_crash_point("prepare-cdi-written");
	claims_state_lock(e->state);
	c->state = CKPT_PREPARE_COMPLETED;
	r = add_entry(e, c, &added);
	if (r == 0)
		claims_state_changed(e->state, c);
	claims_state_unlock(e->state);
	if (r < 0) {
		drop_unwritten(e, op, c, "out of memory");
		return;
	}
	if (sync_state(e, ERR_MSG_ARGS(&cause)) < 0) {
		roll_back(e, op, c, cause.text);
		return;
	}
	claims_crash_point("prepare-completed");
	answer(op, c);
}

bool engine_entry_rebuilt(const struct ckpt_claim *c)
{
	for (size_t i = 0; i < c->n_devices; i++)
		if (!c->devices[i].n_requests)
			return true;
	return false;
}

static int set_string(char **dst, const char *src)
{
	char *copy = strdup(src);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* A rebuilt entry takes namespace, name and requests from the claim's plan
 * (lock held). */
static int complete_rebuilt(struct ckpt_claim *c, const struct claim_plan *p)
{
	int r = set_string(&c->namespace_, p->namespace_);

	if (!r)
		r = set_string(&c->name, p->name);
	for (size_t i = 0; !r && i < c->n_devices; i++) {
		struct ckpt_device *cd = &c->devices[i];
		for (size_t j = 0; !r && !cd->n_requests && j < p->n_devices; j++) {
			const struct claim_plan_device *pd = &p->devices[j];
			if (strcmp(pd->device, cd->device) || strcmp(pd->pool, cd->pool))
				continue;
			free(cd->requests);
			if (!(cd->requests = calloc(pd->n_requests + 1, sizeof(*cd->requests))))
				r = -ENOMEM;
			for (size_t k = 0; !r && k < pd->n_requests; k++)
				if (!(cd->requests[cd->n_requests++] = strdup(pd->requests[k])))
					r = -ENOMEM;
		}
	}
	return r;
}

/* Already prepared: same answer, no hardware; a lost CDI spec is written again. */
void engine_work_hit(struct claims_engine *e, struct op *op)
{
	struct ckpt_claim *c;
	struct err_msg cause = { "" };
	int r = 0;

	claims_state_lock(e->state);
	c = checkpoint_find(claims_state_checkpoint(e->state), op->uid);
	if (c && op->plan) {
		r = complete_rebuilt(c, op->plan);
		claims_state_changed(e->state, c);
	}
	claims_state_unlock(e->state);
	if (!c) {
		op_fail(op, "its checkpoint entry vanished");
		return;
	}
	if (r < 0) {
		op_fail(op, "out of memory");
		return;
	}
	if (op->plan && sync_state(e, ERR_MSG_ARGS(&cause)) < 0)
		log_warn("driver %s: claim %s/%s: its requests are known now but %s; they are "
			 "written with the next change", e->driver, op->namespace_, op->name,
			 cause.text);
	if (c->n_devices && engine_write_specs(e, c, true, ERR_MSG_ARGS(&cause)) < 0) {
		op_fail(op, "it is prepared but its CDI spec cannot be written again: %s",
			cause.text);
		return;
	}
	answer(op, c);
}

/* True when some device of @c recorded undo state: unpreparing changes the
 * node, so it is written ahead as UnprepareStarted. */
static bool changes_node(const struct ckpt_claim *c)
{
	for (size_t i = 0; i < c->n_devices; i++)
		if (c->devices[i].undo.n)
			return true;
	return false;
}

void engine_work_unprepare(struct claims_engine *e, struct op *op)
{
	struct ckpt_claim *c;
	struct err_msg cause = { "" };
	bool ahead = false;
	size_t n_devices;
	int r;

	claims_state_lock(e->state);
	c = checkpoint_find(claims_state_checkpoint(e->state), op->uid);
	if (c && changes_node(c)) {
		c->state = CKPT_UNPREPARE_STARTED;
		claims_state_changed(e->state, c);
		ahead = true;
	}
	claims_state_unlock(e->state);
	if (!c)
		return;
	if (ahead && sync_state(e, ERR_MSG_ARGS(&cause)) < 0) {
		op_fail(op, "%s", cause.text);
		return;
	}
	claims_crash_point("unprepare-started");
	r = engine_unprepare_devices(e, c, true, ERR_MSG_ARGS(&cause));
	if (r < 0) {
		/* the entry stays UnprepareStarted: the kubelet retries, a start finishes it */
		op_fail(op, "%s", cause.text);
		return;
	}
	claims_crash_point("unprepare-devices");
	if (engine_remove_claim_files(e, c) < 0) {
		op_fail(op, "cannot remove its CDI spec from %s", e->cdi_dir);
		return;
	}
	claims_crash_point("unprepare-cdi-removed");
	n_devices = c->n_devices;
	/* it succeeds only once durable: a failed write keeps the entry (its
	 * devices reserved) and fails the call, so the kubelet retries */
	if (remove_entry(e, op->uid, CKPT_UNPREPARE_STARTED, ERR_MSG_ARGS(&cause)) < 0)
		op_fail(op, "unprepared, but %s; the kubelet's retry finishes it", cause.text);
	else
		op->n_unprepared = n_devices;
}
