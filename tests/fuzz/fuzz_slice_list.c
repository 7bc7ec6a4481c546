/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the slice pipeline's text side: a List body
 * (agent/slices/list_body.c) whose items become published records and
 * desired records (record.c), planned against each other (sync.c), every
 * write rendered. The first byte is the dropped-gates mask. Invariants: no
 * crash or leak; a plan is deletes, updates, creates in that order; every
 * write renders, with or without a tree of its devices, to the same text; a
 * record made device by device from text is the one made from the tree; a
 * record made again from its own text has the same digests and names; with no published slices a plan only creates; and
 * when the desired slices are unambiguous (distinct, non-empty device sets,
 * no timeAdded or allNodes of their own), writing a plan converges: the
 * next plan is empty.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slices/list_body.h"
#include "agent/slices/sync.h"

#define POOL "node-1"

struct lists {
	struct slice_list *published, *desired;
};

/* Taken apart device by device or parsed whole: the same record. */
static void check_text_or_tree(const char *text, size_t len, enum slice_record_kind kind,
			       const struct slice_record *from_text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *tree = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	if (!tree && tok && json_tokener_get_error(tok) == json_tokener_continue)
		tree = json_tokener_parse_ex(tok, "", 1);
	json_tokener_free(tok);
	struct slice_record *r = NULL;
	if (!json_object_is_type(tree, json_type_object) ||
	    slice_record_from_json(tree, kind, &r) < 0) {
		json_object_put(tree);
		return;
	}
	if (strcmp(r->text, from_text->text) || !slice_digest_equal(&r->digest, &from_text->digest) ||
	    !slice_digest_equal(&r->digest_full, &from_text->digest_full) ||
	    !slice_record_same_names(r, from_text) || r->gates != from_text->gates ||
	    r->gate_keys != from_text->gate_keys || r->time_added != from_text->time_added ||
	    !r->time_added_devices != !from_text->time_added_devices ||
	    (r->time_added_devices && strcmp(r->time_added_devices, from_text->time_added_devices)))
		abort();
	slice_record_free(r);
	json_object_put(tree);
}

static int on_item(void *userdata, const char *text, size_t len)
{
	struct lists *l = userdata;
	struct slice_record *p = NULL, *d = NULL;
	if (slice_record_from_text(text, len, SLICE_RECORD_PUBLISHED, &p) == 0) {
		check_text_or_tree(text, len, SLICE_RECORD_PUBLISHED, p);
		slice_list_append(l->published, p);
	}
	if (slice_record_from_text(text, len, SLICE_RECORD_DESIRED, &d) == 0) {
		check_text_or_tree(text, len, SLICE_RECORD_DESIRED, d);
		if (l->desired->n < 16)
			slice_list_append(l->desired, d);
		else
			slice_record_free(d);
	}
	return 0;
}

static void check_round_trip(const struct slice_record *r)
{
	struct slice_record *again = NULL;
	if (slice_record_from_text(r->text, r->text_len, SLICE_RECORD_DESIRED, &again) < 0)
		abort();	/* our own text always parses */
	if (!slice_digest_equal(&r->digest, &again->digest) ||
	    !slice_digest_equal(&r->digest_full, &again->digest_full) ||
	    !slice_record_same_names(r, again) || r->gates != again->gates)
		abort();
	slice_record_free(again);
}

static void check_order(const struct slice_plan *p)
{
	if (p->n_ops != p->n_delete + p->n_update + p->n_create)
		abort();
	for (size_t i = 0; i < p->n_ops; i++) {
		enum slice_op_type want = i < p->n_delete ? SLICE_OP_DELETE
					  : i < p->n_delete + p->n_update ? SLICE_OP_UPDATE
					  : SLICE_OP_CREATE;
		if (p->ops[i].type != want)
			abort();
	}
}

/* The server: what @published holds once @p is written (published records). */
static struct slice_list *apply(const struct slice_list *published, const struct slice_plan *p)
{
	static unsigned counter;
	struct slice_list *next = NULL;
	if (slice_list_new(&next) < 0)
		abort();
	for (size_t i = 0; i < published->n; i++) {
		const struct slice_record *e = published->items[i];
		bool touched = false;
		for (size_t k = 0; k < p->n_ops && !touched; k++)
			touched = p->ops[k].published == e;
		if (touched)
			continue;
		struct slice_record *copy = NULL;
		if (slice_record_copy(e, &copy) < 0)
			abort();
		slice_list_append(next, copy);
	}
	for (size_t k = 0; k < p->n_ops; k++) {
		struct json_object *obj = NULL, *meta = NULL;
		struct slice_record *rec = NULL;
		if (p->ops[k].type == SLICE_OP_DELETE)
			continue;
		if (slice_plan_op_object(p, k, &obj) < 0)
			abort();
		/* written without a tree of the devices: the same text */
		char *text = NULL;
		int flags = k & 1 ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN;
		if (slice_plan_op_text(p, k, flags | JSON_C_TO_STRING_NOSLASHESCAPE, NULL, NULL, &text,
				       NULL) < 0 ||
		    strcmp(text, json_object_to_json_string_ext(obj, flags | JSON_C_TO_STRING_NOSLASHESCAPE)))
			abort();
		free(text);
		if (!json_object_object_get_ex(obj, "metadata", &meta) ||
		    !json_object_is_type(meta, json_type_object)) {
			meta = json_object_new_object();
			json_object_object_add(obj, "metadata", meta);
		}
		char buf[32];
		snprintf(buf, sizeof(buf), "s-%u", ++counter);
		if (p->ops[k].type == SLICE_OP_CREATE) {
			json_object_object_add(meta, "name", json_object_new_string(buf));
			json_object_object_add(meta, "uid", json_object_new_string(buf));
		}
		json_object_object_add(meta, "resourceVersion", json_object_new_string(buf));
		if (slice_record_from_json(obj, SLICE_RECORD_PUBLISHED, &rec) < 0)
			abort();
		slice_list_append(next, rec);
		json_object_put(obj);
	}
	return next;
}

static bool unambiguous(const struct slice_list *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct slice_record *r = d->items[i];
		if (!r->n_names || r->time_added || strstr(r->text, "\"allNodes\""))
			return false;
		for (size_t j = 0; j < i; j++)
			if (slice_record_same_names(r, d->items[j]))
				return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned dropped = data[0] & SLICE_GATE_ALL;
	struct lists l = { 0 };
	if (slice_list_new(&l.published) < 0 || slice_list_new(&l.desired) < 0)
		abort();
	struct json_object *meta = NULL;
	if (slice_list_body_scan((const char *)data + 1, size - 1, on_item, &l, &meta) == 0)
		json_object_put(meta);
	for (size_t i = 0; i < l.desired->n; i++)
		check_round_trip(l.desired->items[i]);

	struct slice_plan *p = NULL;
	if (slice_plan_compute(NULL, l.desired, POOL, dropped, &p) == 0) {
		check_order(p);
		if (p->n_create != l.desired->n || p->n_ops != p->n_create)
			abort();
		slice_plan_free(p);
	}
	if (slice_plan_compute(l.published, l.desired, POOL, dropped, &p) == 0) {
		check_order(p);
		struct slice_list *after = apply(l.published, p);
		struct slice_plan *again = NULL;
		if (slice_plan_compute(after, l.desired, POOL, dropped, &again) < 0)
			abort();
		check_order(again);
		if (unambiguous(l.desired) && again->n_ops)
			abort();
		slice_plan_free(again);
		slice_list_unref(after);
		slice_plan_free(p);
	}
	slice_list_unref(l.published);
	slice_list_unref(l.desired);
	return 0;
}
