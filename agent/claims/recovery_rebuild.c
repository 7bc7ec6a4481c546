/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recovery when the checkpoint cannot be read (recovery.h,
 * recovery_plan_unreadable), pure: the prepared claims rebuilt from our CDI
 * spec files, and nothing removed.
 */
#include "agent/claims/recovery.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/cdi_names.h"
#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"

#define DEVICE_ENV "DRALET_DEVICE_"
#define SHARE_ENV "DRALET_SHARE_"

static char *join_options(struct json_object *opts)
{
	size_t n = opts ? json_object_array_length(opts) : 0, len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(json_object_get_string(json_object_array_get_idx(opts, i))) + 1;
	if (!n || !(s = calloc(1, len)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, json_object_get_string(json_object_array_get_idx(opts, i)));
	}
	return s;
}

/* The container edits of a spec device, as the checkpoint keeps them. */
static int edits_from_spec(struct json_object *ce, struct dralet_edits *e)
{
	struct json_object *env = json_get_array(ce, "env"), *nodes = json_get_array(ce, "deviceNodes");
	struct json_object *mounts = json_get_array(ce, "mounts");
	size_t n_env = env ? json_object_array_length(env) : 0;
	size_t n_nodes = nodes ? json_object_array_length(nodes) : 0;
	size_t n_mounts = mounts ? json_object_array_length(mounts) : 0;

	if (edits_reserve(e, n_env, n_nodes, n_mounts) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n_env; i++) {
		const char *v = json_object_get_string(json_object_array_get_idx(env, i));
		if (v && strchr(v, '=') && !(e->env[e->n_env++] = strdup(v)))
			return -ENOMEM;
	}
	for (size_t i = 0; i < n_nodes; i++) {
		struct json_object *v = json_object_array_get_idx(nodes, i), *num;
		const char *path = json_get_str(v, "path"), *perm = json_get_str(v, "permissions");
		struct edits_node *n;

		if (!path)
			continue;
		n = &e->nodes[e->n_nodes++];
		if (!(n->node.path = strdup(path)) || (perm && !(n->permissions = strdup(perm))))
			return -ENOMEM;
		if (json_object_object_get_ex(v, "major", &num))
			n->node.major = (unsigned)json_object_get_int64(num);
		if (json_object_object_get_ex(v, "minor", &num))
			n->node.minor = (unsigned)json_object_get_int64(num);
	}
	for (size_t i = 0; i < n_mounts; i++) {
		struct json_object *v = json_object_array_get_idx(mounts, i);
		const char *host = json_get_str(v, "hostPath"), *ctr = json_get_str(v, "containerPath");
		struct edits_mount *m;

		if (!host || !ctr)
			continue;
		m = &e->mounts[e->n_mounts++];
		m->options = join_options(json_get_array(v, "options"));
		if (!(m->host_path = strdup(host)) || !(m->container_path = strdup(ctr)))
			return -ENOMEM;
	}
	return 0;
}

/* Pool and device from DRALET_DEVICE_<NAME>=<driver>/<pool>/<device> (the
 * agent adds it to every device's edits); false when missing. */
static bool device_of(const struct dralet_edits *e, const char *driver, const char *device,
		      char *pool, size_t size)
{
	size_t dlen = strlen(driver);

	for (size_t i = 0; i < e->n_env; i++) {
		const char *v = strchr(e->env[i], '='), *slash;
		if (strncmp(e->env[i], DEVICE_ENV, strlen(DEVICE_ENV)) || !v++ ||
		    strncmp(v, driver, dlen) || v[dlen] != '/')
			continue;
		v += dlen + 1;
		if (!(slash = strchr(v, '/')) || strcmp(slash + 1, device) ||
		    (size_t)(slash - v) >= size)
			continue;
		snprintf(pool, size, "%.*s", (int)(slash - v), v);
		return true;
	}
	return false;
}

static bool has_env(const struct dralet_edits *e, const char *entry)
{
	for (size_t i = 0; i < e->n_env; i++)
		if (!strcmp(e->env[i], entry))
			return true;
	return false;
}

static int copy_identity(struct ckpt_identity *dst, const struct ckpt_identity *now)
{
	*dst = *now;
	dst->pci_address = now->pci_address ? strdup(now->pci_address) : NULL;
	dst->uuid = now->uuid ? strdup(now->uuid) : NULL;
	return (now->pci_address && !dst->pci_address) || (now->uuid && !dst->uuid) ? -ENOMEM : 0;
}

/* A share's spec device is named <uid>-<device>-<shareID> and carries
 * DRALET_SHARE_<DEVICE>=<shareID>: splits @d->device (the part after the
 * UID) into device and share. 0, or -ENOMEM. */
static int split_share(struct ckpt_device *d)
{
	size_t len = strlen(d->device);

	for (size_t i = 0; i < d->edits.n_env; i++) {
		const char *v = strchr(d->edits.env[i], '=');
		size_t vlen;
		if (strncmp(d->edits.env[i], SHARE_ENV, strlen(SHARE_ENV)) || !v++)
			continue;
		vlen = strlen(v);
		if (!vlen || vlen + 1 >= len || d->device[len - vlen - 1] != '-' ||
		    strcmp(d->device + len - vlen, v))
			continue;
		if (!(d->share_id = strdup(v)))
			return -ENOMEM;
		d->device[len - vlen - 1] = '\0';
		return 0;
	}
	return 0;
}

/* Adds one spec device to @c; 0, 1 (not ours to rebuild: @why says why) or -ENOMEM. */
static int add_device(struct ckpt_claim *c, struct json_object *sd, const char *driver,
		      const char *vendor, const char *cls, recovery_lookup_fn lookup, void *ud,
		      char *why, size_t whylen)
{
	const char *name = json_get_str(sd, "name");
	size_t ulen = strlen(c->uid);
	struct ckpt_device *grown, *d;
	struct ckpt_identity now = { 0 };
	struct json_object *ce = NULL;
	char pool[256], id[768];

	if (!name || strncmp(name, c->uid, ulen) || name[ulen] != '-' || !name[ulen + 1])
		return err_printf(why, whylen, 1, "device \"%s\" is not named <claim "
				  "UID>-<device>", name ? name : "");
	if (!(grown = realloc(c->devices, (c->n_devices + 1) * sizeof(*grown))))
		return -ENOMEM;
	c->devices = grown;
	d = memset(&c->devices[c->n_devices++], 0, sizeof(*d));
	json_object_object_get_ex(sd, "containerEdits", &ce);
	if (!(d->device = strdup(name + ulen + 1)) || !(d->cdi_class = strdup(cls)) ||
	    edits_from_spec(ce, &d->edits) < 0 || split_share(d) < 0)
		return -ENOMEM;
	if (!device_of(&d->edits, driver, d->device, pool, sizeof(pool))) {
		ckpt_device_clear(d);
		c->n_devices--;
		return err_printf(why, whylen, 1, "device %s carries no " DEVICE_ENV "* entry "
				  "naming its pool", name + ulen + 1);
	}
	d->prepared = true;
	d->admin_access = has_env(&d->edits, "DRA_ADMIN_ACCESS=true");
	if (!(d->pool = strdup(pool)) ||
	    cdi_qualified_name(vendor, cls, name, id, sizeof(id)) < 0 || !(d->cdi_id = strdup(id)))
		return -ENOMEM;
	if (lookup(ud, d->pool, d->device, &now))
		return copy_identity(&d->identity, &now);
	return err_printf(why, whylen, 0, "device %s/%s is not on this node (not reserved)",
			  d->pool, d->device);
}

static struct ckpt_claim *claim_for(struct checkpoint *ck, const char *uid, bool *ret_new)
{
	struct ckpt_claim *c = checkpoint_find(ck, uid);

	*ret_new = !c;
	if (c)
		return c;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	c->state = CKPT_PREPARE_COMPLETED;
	c->uid = strdup(uid);
	c->namespace_ = strdup("");	/* unknown until the kubelet or the store says */
	c->name = strdup("");
	if (!c->uid || !c->namespace_ || !c->name || checkpoint_add(ck, c) < 0) {
		ckpt_claim_free(c);
		return NULL;
	}
	return c;
}

/* Rebuilds from one spec file into @ck; fills @a (REBUILT or KEEP_UNACCOUNTED). */
static int rebuild_file(struct checkpoint *ck, const struct recovery_spec *s, const char *driver,
			const char *vendor, recovery_lookup_fn lookup, void *ud,
			struct recovery_action *a)
{
	char cls[256], uid[256], kind[600], why[400] = "";
	struct json_object *devs = json_get_array(s->spec, "devices");
	struct ckpt_claim *c;
	size_t before;
	bool fresh;

	a->file = s->file;
	a->kind = RECOVERY_KEEP_UNACCOUNTED;
	if (cdi_parse_spec_file_name(vendor, s->file, cls, sizeof(cls), uid, sizeof(uid)) < 0) {
		snprintf(a->reason, sizeof(a->reason), "its name is no spec file name of ours");
		return 0;
	}
	snprintf(kind, sizeof(kind), "%s/%s", vendor, cls);
	if (!s->spec || !devs || !json_get_str(s->spec, "kind") ||
	    strcmp(json_get_str(s->spec, "kind"), kind)) {
		snprintf(a->reason, sizeof(a->reason), "it cannot be read as a CDI spec of kind %.200s",
			 kind);
		return 0;
	}
	if (!(c = claim_for(ck, uid, &fresh)))
		return -ENOMEM;
	before = c->n_devices;
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		int r = add_device(c, json_object_array_get_idx(devs, i), driver, vendor, cls,
				   lookup, ud, why, sizeof(why));
		if (r < 0)
			return r;
	}
	if (c->n_devices == before) {
		if (fresh)
			checkpoint_remove(ck, uid);
		snprintf(a->reason, sizeof(a->reason), "no device of it can be rebuilt%s%.250s",
			 why[0] ? ": " : "", why);
		return 0;
	}
	a->kind = RECOVERY_REBUILT;
	snprintf(a->reason, sizeof(a->reason), "rebuilt from %.120s (%zu device(s)%s%.150s)", s->file,
		 c->n_devices - before, why[0] ? "; " : "", why);
	return 0;
}

int recovery_plan_unreadable(const char *driver, const char *vendor, const char *boot_id,
			     const struct recovery_spec *specs, size_t n, recovery_lookup_fn lookup,
			     void *userdata, struct checkpoint **ret_ck,
			     struct recovery_plan **ret_plan)
{
	struct checkpoint *ck = checkpoint_new(driver, boot_id);
	struct recovery_plan *p = calloc(1, sizeof(*p));
	int r = ck && p && (p->actions = calloc(n + 1, sizeof(*p->actions))) ? 0 : -ENOMEM;

	for (size_t i = 0; !r && i < n; i++) {
		struct recovery_action *a = &p->actions[p->n_actions++];
		r = rebuild_file(ck, &specs[i], driver, vendor, lookup, userdata, a);
	}
	/* claim indexes once every file is in: a claim may have several files */
	for (size_t i = 0; !r && i < p->n_actions; i++) {
		char cls[256], uid[256];
		if (p->actions[i].kind != RECOVERY_REBUILT ||
		    cdi_parse_spec_file_name(vendor, p->actions[i].file, cls, sizeof(cls), uid,
					     sizeof(uid)) < 0)
			continue;
		for (size_t j = 0; j < ck->n_claims; j++)
			if (!strcmp(ck->claims[j]->uid, uid))
				p->actions[i].claim = j;
	}
	if (r < 0) {
		checkpoint_free(ck);
		recovery_plan_free(p);
		return r;
	}
	*ret_ck = ck;
	*ret_plan = p;
	return 0;
}
