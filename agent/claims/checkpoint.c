/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/checkpoint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <zlib.h>

#include "agent/lib/err_msg.h"
#include "agent/lib/json_get.h"

#define DATA_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static const char *const state_names[] = {
	[CKPT_PREPARE_STARTED] = "PrepareStarted",
	[CKPT_PREPARE_COMPLETED] = "PrepareCompleted",
	[CKPT_UNPREPARE_STARTED] = "UnprepareStarted",
};

const char *ckpt_state_name(enum ckpt_state s)
{
	return (unsigned)s < sizeof(state_names) / sizeof(state_names[0]) ? state_names[s] : "?";
}

/* CRC-32 (IEEE) carried over pieces: start with 0, feed, use the result. */
static uint32_t crc32_update(uint32_t crc, const void *data, size_t len)
{
	return (uint32_t)crc32_z(crc, data, len);	/* zlib's */
}

uint32_t checkpoint_crc32(const void *data, size_t len)
{
	return crc32_update(0, data, len);
}

/* ---- model ---- */

struct checkpoint *checkpoint_new(const char *driver, const char *boot_id)
{
	struct checkpoint *ck = calloc(1, sizeof(*ck));

	if (!ck)
		return NULL;
	ck->driver = strdup(driver ? driver : "");
	ck->boot_id = strdup(boot_id ? boot_id : "");
	if (!ck->driver || !ck->boot_id) {
		checkpoint_free(ck);
		return NULL;
	}
	return ck;
}

void ckpt_device_clear(struct ckpt_device *d)
{
	if (!d)
		return;
	free(d->pool);
	free(d->device);
	free(d->share_id);
	for (size_t i = 0; i < d->n_consumed; i++) {
		free((char *)d->consumed[i].name);
		free((char *)d->consumed[i].quantity);
	}
	free(d->consumed);
	for (size_t i = 0; i < d->n_requests; i++)
		free(d->requests[i]);
	free(d->requests);
	free(d->cdi_class);
	free(d->cdi_id);
	free(d->identity.pci_address);
	free(d->identity.uuid);
	edits_clear(&d->edits);
	undo_clear(&d->undo);
	memset(d, 0, sizeof(*d));
}

void ckpt_claim_free(struct ckpt_claim *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_devices; i++)
		ckpt_device_clear(&c->devices[i]);
	free(c->devices);
	free(c->uid);
	free(c->namespace_);
	free(c->name);
	free(c->written);
	free(c);
}

void ckpt_claim_changed(struct ckpt_claim *c)
{
	free(c->written);
	c->written = NULL;
}

void checkpoint_free(struct checkpoint *ck)
{
	if (!ck)
		return;
	for (size_t i = 0; i < ck->n_claims; i++)
		ckpt_claim_free(ck->claims[i]);
	free(ck->claims);
	free(ck->driver);
	free(ck->boot_id);
	free(ck);
}

struct ckpt_claim *checkpoint_find(const struct checkpoint *ck, const char *uid)
{
	for (size_t i = 0; ck && uid && i < ck->n_claims; i++)
		if (!strcmp(ck->claims[i]->uid, uid))
			return ck->claims[i];
	return NULL;
}

int checkpoint_add(struct checkpoint *ck, struct ckpt_claim *claim)
{
	struct ckpt_claim **claims = realloc(ck->claims, (ck->n_claims + 1) * sizeof(*claims));

	if (!claims)
		return -ENOMEM;
	ck->claims = claims;
	ck->claims[ck->n_claims++] = claim;
	return 0;
}

struct ckpt_claim *checkpoint_take(struct checkpoint *ck, const char *uid)
{
	for (size_t i = 0; i < ck->n_claims; i++)
		if (!strcmp(ck->claims[i]->uid, uid)) {
			struct ckpt_claim *c = ck->claims[i];
			memmove(&ck->claims[i], &ck->claims[i + 1],
				(ck->n_claims - i - 1) * sizeof(*ck->claims));
			ck->n_claims--;
			return c;
		}
	return NULL;
}

int checkpoint_remove(struct checkpoint *ck, const char *uid)
{
	struct ckpt_claim *c = checkpoint_take(ck, uid);

	if (!c)
		return -ENOENT;
	ckpt_claim_free(c);
	return 0;
}

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (src && !(*dst = strdup(src)))
		return -ENOMEM;
	return 0;
}

int ckpt_edits_copy(struct dralet_edits *dst, const struct dralet_edits *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src)
		return 0;
	if (edits_reserve(dst, src->n_env, src->n_nodes, src->n_mounts) < 0)
		goto fail;
	for (; dst->n_env < src->n_env; dst->n_env++)
		if (dup_opt(&dst->env[dst->n_env], src->env[dst->n_env]))
			goto fail;
	for (; dst->n_nodes < src->n_nodes; dst->n_nodes++) {
		const struct edits_node *s = &src->nodes[dst->n_nodes];
		struct edits_node *d = &dst->nodes[dst->n_nodes];
		char *path;

		d->node = s->node;
		d->node.path = NULL;
		if (dup_opt(&path, s->node.path) || dup_opt(&d->permissions, s->permissions)) {
			free(path);
			goto fail;
		}
		d->node.path = path;
	}
	for (; dst->n_mounts < src->n_mounts; dst->n_mounts++) {
		const struct edits_mount *s = &src->mounts[dst->n_mounts];
		struct edits_mount *d = &dst->mounts[dst->n_mounts];

		if (dup_opt(&d->host_path, s->host_path) ||
		    dup_opt(&d->container_path, s->container_path) ||
		    dup_opt(&d->options, s->options)) {
			dst->n_mounts++;	/* let edits_clear free the partial entry */
			goto fail;
		}
	}
	return 0;
fail:
	edits_clear(dst);
	return -ENOMEM;
}

int ckpt_undo_copy(struct dralet_undo *dst, const struct dralet_undo *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src || !src->n)
		return 0;
	if (!(dst->entries = calloc(src->n, sizeof(*dst->entries))))
		return -ENOMEM;
	for (; dst->n < src->n; dst->n++) {
		struct undo_entry *d = &dst->entries[dst->n];
		if (dup_opt(&d->key, src->entries[dst->n].key) ||
		    dup_opt(&d->value, src->entries[dst->n].value)) {
			dst->n++;
			undo_clear(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

/* ---- encoding ---- */

/* Encoding helpers record the first failure in *err and do nothing after. */
static void put_string(struct json_object *o, const char *key, const char *value, int *err)
{
	struct json_object *v;

	if (*err || !value)
		return;
	v = json_object_new_string(value);
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		*err = -ENOMEM;
	}
}

static void put_value(struct json_object *o, const char *key, struct json_object *v, int *err)
{
	if (*err) {
		json_object_put(v);
		return;
	}
	if (!v || json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		*err = -ENOMEM;
	}
}

static void push(struct json_object *a, struct json_object *v, int *err)
{
	if (*err) {
		json_object_put(v);
		return;
	}
	if (!v || json_object_array_add(a, v) < 0) {
		json_object_put(v);
		*err = -ENOMEM;
	}
}

static struct json_object *hex16(uint16_t v)
{
	char buf[8];

	snprintf(buf, sizeof(buf), "0x%04x", v);
	return json_object_new_string(buf);
}

static struct json_object *encode_identity(const struct ckpt_identity *id, int *err)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	if (id->pci_address) {
		put_string(o, "pciAddress", id->pci_address, err);
		put_value(o, "vendorID", hex16(id->vendor_id), err);
		put_value(o, "deviceID", hex16(id->device_id), err);
		put_value(o, "subsystemVendorID", hex16(id->subsystem_vendor_id), err);
		put_value(o, "subsystemDeviceID", hex16(id->subsystem_device_id), err);
	}
	put_string(o, "uuid", id->uuid, err);
	return o;
}

static struct json_object *encode_edits(const struct dralet_edits *e, int *err)
{
	struct json_object *o = json_object_new_object();
	struct json_object *env = json_object_new_array();
	struct json_object *nodes = json_object_new_array();
	struct json_object *mounts = json_object_new_array();

	if (!o || !env || !nodes || !mounts)
		*err = -ENOMEM;
	for (size_t i = 0; i < e->n_env; i++)
		push(env, json_object_new_string(e->env[i]), err);
	for (size_t i = 0; i < e->n_nodes; i++) {
		struct json_object *n = json_object_new_object();
		push(nodes, n, err);
		if (*err)
			break;
		put_string(n, "path", e->nodes[i].node.path, err);
		put_value(n, "major", json_object_new_int64(e->nodes[i].node.major), err);
		put_value(n, "minor", json_object_new_int64(e->nodes[i].node.minor), err);
		put_string(n, "permissions", e->nodes[i].permissions, err);
	}
	for (size_t i = 0; i < e->n_mounts; i++) {
		struct json_object *m = json_object_new_object();
		push(mounts, m, err);
		if (*err)
			break;
		put_string(m, "hostPath", e->mounts[i].host_path, err);
		put_string(m, "containerPath", e->mounts[i].container_path, err);
		put_string(m, "options", e->mounts[i].options, err);
	}
	if (o) {
		put_value(o, "env", env, err);
		put_value(o, "deviceNodes", nodes, err);
		put_value(o, "mounts", mounts, err);
	} else {
		json_object_put(env);
		json_object_put(nodes);
		json_object_put(mounts);
	}
	return o;
}

int ckpt_consumed_copy(struct dralet_capacity **dst, size_t *ret_n,
		       const struct dralet_capacity *src, size_t n)
{
	struct dralet_capacity *c = n ? calloc(n, sizeof(*c)) : NULL;
	size_t k = 0;

	*dst = NULL;
	*ret_n = 0;
	if (n && !c)
		return -ENOMEM;
	for (; k < n; k++) {
		c[k].name = strdup(src[k].name);
		c[k].quantity = strdup(src[k].quantity);
		if (!c[k].name || !c[k].quantity)
			break;
	}
	if (k < n) {
		for (size_t i = 0; i <= k; i++) {
			free((char *)c[i].name);
			free((char *)c[i].quantity);
		}
		free(c);
		return -ENOMEM;
	}
	*dst = c;
	*ret_n = n;
	return 0;
}

static struct json_object *encode_device(const struct ckpt_device *d, int *err)
{
	struct json_object *o = json_object_new_object(), *reqs, *undo;

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	put_string(o, "pool", d->pool, err);
	put_string(o, "device", d->device, err);
	if (d->share_id) {
		struct json_object *consumed = json_object_new_object();
		put_string(o, "shareID", d->share_id, err);
		for (size_t i = 0; consumed && i < d->n_consumed; i++)
			put_string(consumed, d->consumed[i].name, d->consumed[i].quantity, err);
		put_value(o, "consumedCapacity", consumed, err);
	}
	reqs = json_object_new_array();
	for (size_t i = 0; reqs && i < d->n_requests; i++)
		push(reqs, json_object_new_string(d->requests[i]), err);
	put_value(o, "requests", reqs, err);
	put_value(o, "adminAccess", json_object_new_boolean(d->admin_access), err);
	put_value(o, "prepared", json_object_new_boolean(d->prepared), err);
	put_string(o, "cdiClass", d->cdi_class, err);
	put_string(o, "cdiID", d->cdi_id, err);
	put_value(o, "identity", encode_identity(&d->identity, err), err);
	put_value(o, "edits", encode_edits(&d->edits, err), err);
	undo = json_object_new_object();
	for (size_t i = 0; undo && i < d->undo.n; i++)
		put_string(undo, d->undo.entries[i].key, d->undo.entries[i].value, err);
	put_value(o, "undo", undo, err);
	return o;
}

static struct json_object *encode_claim(const struct ckpt_claim *c, int *err)
{
	struct json_object *o = json_object_new_object(), *devs;

	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	put_string(o, "uid", c->uid, err);
	put_string(o, "namespace", c->namespace_, err);
	put_string(o, "name", c->name, err);
	put_string(o, "state", ckpt_state_name(c->state), err);
	devs = json_object_new_array();
	for (size_t j = 0; devs && j < c->n_devices; j++)
		push(devs, encode_device(&c->devices[j], err), err);
	put_value(o, "devices", devs, err);
	return o;
}

/* Writes @len bytes of @text to @f and adds them to the checksum @crc. */
static void put_data(FILE *f, uint32_t *crc, const char *text, size_t len)
{
	fwrite(text, 1, len, f);
	*crc = crc32_update(*crc, text, len);
}

/* @c's compact JSON: its cache, else serialized now and kept (NULL: *err). */
static const char *written_text(struct ckpt_claim *c, int *err)
{
	struct json_object *o;

	if (c->written)
		return c->written;
	o = encode_claim(c, err);
	if (!*err && !(c->written = strdup(json_object_to_json_string_ext(o, DATA_FLAGS))))
		*err = -ENOMEM;
	json_object_put(o);
	return c->written;
}

/*
 * The file is written claim by claim, so encoding never holds more than one
 * claim as a JSON tree (a full tree of thousands of claims would be tens of
 * MiB). "data" is written in its compact serialization, one claim per line:
 * the bytes written are the bytes the checksum covers (the whitespace between
 * them is not data), so each claim is serialized once. The checksum comes
 * after "data" in the file.
 */
int checkpoint_write(struct checkpoint *ck, FILE *f)
{
	static const char claims_key[] = ",\"claims\":[";
	struct json_object *head = json_object_new_object();
	uint32_t crc = 0;
	int err = 0;

	if (!head)
		return -ENOMEM;
	put_string(head, "driver", ck->driver, &err);
	put_string(head, "bootID", ck->boot_id, &err);
	if (err) {
		json_object_put(head);
		return -ENOMEM;
	}
	/* {"driver":"...","bootID":"...","claims":[ ... ]} */
	const char *compact_head = json_object_to_json_string_ext(head, DATA_FLAGS);
	fprintf(f, "{\n  \"kind\": \"%s\",\n  \"version\": %d,\n  \"data\": ", CHECKPOINT_KIND,
		CHECKPOINT_VERSION);
	put_data(f, &crc, compact_head, strlen(compact_head) - 1);	/* without '}' */
	put_data(f, &crc, claims_key, sizeof(claims_key) - 1);
	for (size_t i = 0; !err && i < ck->n_claims; i++) {
		const char *text = written_text(ck->claims[i], &err);

		if (!text)
			break;
		if (i)
			put_data(f, &crc, ",", 1);
		fputs("\n    ", f);
		put_data(f, &crc, text, strlen(text));
	}
	if (ck->n_claims)
		fputs("\n  ", f);
	put_data(f, &crc, "]}", 2);
	fprintf(f, ",\n  \"checksum\": \"crc32:%08" PRIx32 "\"\n}\n", crc);
	json_object_put(head);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}

int checkpoint_encode(struct checkpoint *ck, char **ret_text, size_t *ret_len)
{
	char *out = NULL;
	size_t out_len = 0;
	FILE *f = open_memstream(&out, &out_len);
	int r;

	if (!f)
		return -ENOMEM;
	r = checkpoint_write(ck, f);
	if (fclose(f) != 0 && !r)
		r = -ENOMEM;
	if (r < 0) {
		free(out);
		return r;
	}
	*ret_text = out;
	*ret_len = out_len;
	return 0;
}

/* ---- decoding ---- */

struct decoder {
	char *err;
	size_t errlen;
	int r;
};

static void fail(struct decoder *d, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct decoder *d, int r, const char *fmt, ...)
{
	va_list ap;

	if (d->r)
		return;
	d->r = r;
	va_start(ap, fmt);
	err_vprintf(d->err, d->errlen, r, fmt, ap);
	va_end(ap);
}

static struct json_object *get(struct json_object *o, const char *key, json_type type,
			       bool required, struct decoder *d, const char *where)
{
	struct json_object *v = json_get(o, key);

	if (!v) {
		if (required)
			fail(d, -EBADMSG, "%s: \"%s\" is missing", where, key);
		return NULL;
	}
	if (!json_object_is_type(v, type)) {
		fail(d, -EBADMSG, "%s: \"%s\" has the wrong type", where, key);
		return NULL;
	}
	return v;
}

static char *get_str(struct json_object *o, const char *key, bool required, struct decoder *d,
		     const char *where)
{
	struct json_object *v = get(o, key, json_type_string, required, d, where);
	char *s;

	if (!v)
		return NULL;
	if (!(s = strdup(json_object_get_string(v))))
		fail(d, -ENOMEM, "out of memory");
	return s;
}

static uint16_t get_hex16(struct json_object *o, const char *key, struct decoder *d,
			  const char *where)
{
	struct json_object *v = get(o, key, json_type_string, true, d, where);
	unsigned long x;
	char *end;

	if (!v)
		return 0;
	x = strtoul(json_object_get_string(v), &end, 16);
	if (*end || x > 0xffff)
		fail(d, -EBADMSG, "%s: \"%s\" is not a 16-bit hex number", where, key);
	return (uint16_t)x;
}

static void decode_identity(struct json_object *o, struct ckpt_identity *id, struct decoder *d,
			    const char *where)
{
	if (!o)
		return;
	id->pci_address = get_str(o, "pciAddress", false, d, where);
	if (id->pci_address) {
		id->vendor_id = get_hex16(o, "vendorID", d, where);
		id->device_id = get_hex16(o, "deviceID", d, where);
		id->subsystem_vendor_id = get_hex16(o, "subsystemVendorID", d, where);
		id->subsystem_device_id = get_hex16(o, "subsystemDeviceID", d, where);
	}
	id->uuid = get_str(o, "uuid", false, d, where);
}

static void decode_edits(struct json_object *o, struct dralet_edits *e, struct decoder *d,
			 const char *where)
{
	struct json_object *env = get(o, "env", json_type_array, false, d, where);
	struct json_object *nodes = get(o, "deviceNodes", json_type_array, false, d, where);
	struct json_object *mounts = get(o, "mounts", json_type_array, false, d, where);
	size_t n_env = env ? json_object_array_length(env) : 0;
	size_t n_nodes = nodes ? json_object_array_length(nodes) : 0;
	size_t n_mounts = mounts ? json_object_array_length(mounts) : 0;

	if (edits_reserve(e, n_env, n_nodes, n_mounts) < 0) {
		fail(d, -ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; !d->r && i < n_env; i++) {
		struct json_object *v = json_object_array_get_idx(env, i);
		if (!json_object_is_type(v, json_type_string) || !strchr(json_object_get_string(v), '=')) {
			fail(d, -EBADMSG, "%s: env[%zu] is not NAME=value", where, i);
			break;
		}
		if (!(e->env[e->n_env++] = strdup(json_object_get_string(v))))
			fail(d, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; !d->r && i < n_nodes; i++) {
		struct json_object *v = json_object_array_get_idx(nodes, i), *mj, *mn;
		struct edits_node *n = &e->nodes[e->n_nodes++];
		char *path = get_str(v, "path", true, d, where);

		n->node.path = path;
		mj = get(v, "major", json_type_int, false, d, where);
		mn = get(v, "minor", json_type_int, false, d, where);
		n->node.major = mj ? (unsigned)json_object_get_int64(mj) : 0;
		n->node.minor = mn ? (unsigned)json_object_get_int64(mn) : 0;
		n->permissions = get_str(v, "permissions", false, d, where);
	}
	for (size_t i = 0; !d->r && i < n_mounts; i++) {
		struct json_object *v = json_object_array_get_idx(mounts, i);
		struct edits_mount *m = &e->mounts[e->n_mounts++];

		m->host_path = get_str(v, "hostPath", true, d, where);
		m->container_path = get_str(v, "containerPath", true, d, where);
		m->options = get_str(v, "options", false, d, where);
	}
}

static void decode_undo(struct json_object *o, struct dralet_undo *u, struct decoder *d,
			const char *where)
{
	size_t n = 0;

	if (!o)
		return;
	json_object_object_foreach(o, key0, val0) {
		(void)key0;
		(void)val0;
		n++;
	}
	if (!n)
		return;
	if (!(u->entries = calloc(n, sizeof(*u->entries)))) {
		fail(d, -ENOMEM, "out of memory");
		return;
	}
	json_object_object_foreach(o, key, val) {
		struct undo_entry *e = &u->entries[u->n++];

		if (!json_object_is_type(val, json_type_string)) {
			fail(d, -EBADMSG, "%s: undo value of \"%s\" is not a string", where, key);
			return;
		}
		e->key = strdup(key);
		e->value = strdup(json_object_get_string(val));
		if (!e->key || !e->value) {
			fail(d, -ENOMEM, "out of memory");
			return;
		}
	}
}

static void decode_consumed(struct json_object *o, struct ckpt_device *dev, struct decoder *d,
			    const char *where)
{
	size_t n = o ? (size_t)json_object_object_length(o) : 0;

	if (!n)
		return;
	if (!(dev->consumed = calloc(n, sizeof(*dev->consumed)))) {
		fail(d, -ENOMEM, "out of memory");
		return;
	}
	json_object_object_foreach(o, key, val) {
		struct dralet_capacity *c = &dev->consumed[dev->n_consumed];

		if (!json_object_is_type(val, json_type_string)) {
			fail(d, -EBADMSG, "%s: consumedCapacity \"%s\" is not a string", where, key);
			return;
		}
		c->name = strdup(key);
		c->quantity = strdup(json_object_get_string(val));
		dev->n_consumed++;
		if (!c->name || !c->quantity) {
			fail(d, -ENOMEM, "out of memory");
			return;
		}
	}
}

static void decode_device(struct json_object *o, struct ckpt_device *dev, struct decoder *d,
			  const char *where)
{
	struct json_object *reqs, *v;

	if (!json_object_is_type(o, json_type_object)) {
		fail(d, -EBADMSG, "%s is not an object", where);
		return;
	}
	dev->pool = get_str(o, "pool", true, d, where);
	dev->device = get_str(o, "device", true, d, where);
	dev->share_id = get_str(o, "shareID", false, d, where);
	decode_consumed(get(o, "consumedCapacity", json_type_object, false, d, where), dev, d,
			where);
	reqs = get(o, "requests", json_type_array, false, d, where);
	if (reqs && json_object_array_length(reqs)) {
		size_t n = json_object_array_length(reqs);
		if (!(dev->requests = calloc(n, sizeof(*dev->requests)))) {
			fail(d, -ENOMEM, "out of memory");
			return;
		}
		for (size_t i = 0; !d->r && i < n; i++) {
			v = json_object_array_get_idx(reqs, i);
			if (!json_object_is_type(v, json_type_string)) {
				fail(d, -EBADMSG, "%s: requests[%zu] is not a string", where, i);
				break;
			}
			if (!(dev->requests[dev->n_requests++] = strdup(json_object_get_string(v))))
				fail(d, -ENOMEM, "out of memory");
		}
	}
	v = get(o, "adminAccess", json_type_boolean, false, d, where);
	dev->admin_access = v && json_object_get_boolean(v);
	v = get(o, "prepared", json_type_boolean, false, d, where);
	dev->prepared = v && json_object_get_boolean(v);
	dev->cdi_class = get_str(o, "cdiClass", true, d, where);
	dev->cdi_id = get_str(o, "cdiID", true, d, where);
	decode_identity(get(o, "identity", json_type_object, false, d, where), &dev->identity, d,
			where);
	v = get(o, "edits", json_type_object, false, d, where);
	if (v)
		decode_edits(v, &dev->edits, d, where);
	decode_undo(get(o, "undo", json_type_object, false, d, where), &dev->undo, d, where);
}

static struct ckpt_claim *decode_claim(struct json_object *o, size_t idx, struct decoder *d)
{
	struct ckpt_claim *c = calloc(1, sizeof(*c));
	struct json_object *devs;
	char where[64];
	const char *state;

	snprintf(where, sizeof(where), "claims[%zu]", idx);
	if (!c) {
		fail(d, -ENOMEM, "out of memory");
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		fail(d, -EBADMSG, "%s is not an object", where);
		return c;
	}
	c->uid = get_str(o, "uid", true, d, where);
	c->namespace_ = get_str(o, "namespace", true, d, where);
	c->name = get_str(o, "name", true, d, where);
	state = json_object_get_string(get(o, "state", json_type_string, true, d, where));
	if (state) {
		size_t k;
		for (k = 0; k < sizeof(state_names) / sizeof(state_names[0]); k++)
			if (!strcmp(state, state_names[k]))
				break;
		if (k == sizeof(state_names) / sizeof(state_names[0]))
			fail(d, -EBADMSG, "%s: unknown state \"%s\"", where, state);
		c->state = (enum ckpt_state)k;
	}
	devs = get(o, "devices", json_type_array, false, d, where);
	if (devs && json_object_array_length(devs)) {
		size_t n = json_object_array_length(devs);
		if (!(c->devices = calloc(n, sizeof(*c->devices)))) {
			fail(d, -ENOMEM, "out of memory");
			return c;
		}
		for (size_t j = 0; !d->r && j < n; j++) {
			char dwhere[96];
			snprintf(dwhere, sizeof(dwhere), "%s.devices[%zu]", where, j);
			decode_device(json_object_array_get_idx(devs, j), &c->devices[c->n_devices++],
				      d, dwhere);
		}
	}
	return c;
}

/* True when the @len bytes at @p are all JSON white space. */
static bool only_space(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return false;
	return true;
}

int checkpoint_decode(const char *text, size_t len, struct checkpoint **ret_ck, char *err,
		      size_t errlen)
{
	struct decoder d = { .err = err, .errlen = errlen };
	struct json_tokener *tok = json_tokener_new();
	struct json_object *file, *data, *v, *claims;
	struct checkpoint *ck = NULL;
	const char *kind, *checksum, *data_text;
	char want[32];

	if (!tok)
		return -ENOMEM;
	if (len > INT32_MAX) {
		json_tokener_free(tok);
		return err_printf(err, errlen, -EBADMSG, "too large");
	}
	file = json_tokener_parse_ex(tok, text, (int)len);
	if (!file || json_tokener_get_error(tok) != json_tokener_success ||
	    !only_space(text + json_tokener_get_parse_end(tok),
			len - json_tokener_get_parse_end(tok)) ||
	    !json_object_is_type(file, json_type_object)) {
		json_tokener_free(tok);
		json_object_put(file);
		return err_printf(err, errlen, -EBADMSG, "not a JSON object (truncated or "
				  "garbled)");
	}
	json_tokener_free(tok);
	kind = json_object_get_string(get(file, "kind", json_type_string, true, &d, "file"));
	v = get(file, "version", json_type_int, true, &d, "file");
	if (!d.r && strcmp(kind, CHECKPOINT_KIND))
		fail(&d, -EBADMSG, "kind is \"%s\", not %s", kind, CHECKPOINT_KIND);
	if (!d.r && json_object_get_int64(v) != CHECKPOINT_VERSION)
		fail(&d, -EPROTONOSUPPORT, "version %" PRId64 " is not known to this dralet "
		     "(it reads version %d)", json_object_get_int64(v), CHECKPOINT_VERSION);
	checksum = json_object_get_string(get(file, "checksum", json_type_string, true, &d, "file"));
	data = get(file, "data", json_type_object, true, &d, "file");
	if (!d.r) {
		data_text = json_object_to_json_string_ext(data, DATA_FLAGS);
		snprintf(want, sizeof(want), "crc32:%08" PRIx32,
			 checkpoint_crc32(data_text, strlen(data_text)));
		if (strcmp(checksum, want))
			fail(&d, -EBADMSG, "checksum mismatch: the file says %s, its data has %s",
			     checksum, want);
	}
	if (!d.r) {
		ck = calloc(1, sizeof(*ck));
		if (!ck)
			fail(&d, -ENOMEM, "out of memory");
	}
	if (!d.r) {
		ck->driver = get_str(data, "driver", true, &d, "data");
		ck->boot_id = get_str(data, "bootID", true, &d, "data");
		claims = get(data, "claims", json_type_array, false, &d, "data");
		for (size_t i = 0; !d.r && claims && i < json_object_array_length(claims); i++) {
			struct ckpt_claim *c = decode_claim(json_object_array_get_idx(claims, i), i, &d);
			if (!c)
				break;
			if (d.r || checkpoint_add(ck, c) < 0) {
				ckpt_claim_free(c);
				fail(&d, -ENOMEM, "out of memory");
			} else if (checkpoint_find(ck, c->uid) != c) {
				fail(&d, -EBADMSG, "claim %s appears twice", c->uid);
			}
		}
	}
	json_object_put(file);
	if (d.r) {
		checkpoint_free(ck);
		return d.r;
	}
	*ret_ck = ck;
	return 0;
}
