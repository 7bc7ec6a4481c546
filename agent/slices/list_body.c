/* SPDX-License-Identifier: Apache-2.0 */
/* The items of a List body, one at a time (see list_body.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent/slices/json_text.h"
#include "agent/slices/list_body.h"

struct top {
	struct json_span items, meta;
	bool have_items, have_meta;
};

static bool is_key(struct json_span key, const char *name)
{
	return key.len == strlen(name) && !memcmp(key.p, name, key.len);
}

static int top_member(void *userdata, struct json_span key, struct json_span value)
{
	struct top *t = userdata;
	if (is_key(key, "items")) {
		t->items = value;
		t->have_items = true;
	} else if (is_key(key, "metadata")) {
		t->meta = value;
		t->have_meta = true;
	}
	return 0;
}

struct relay {
	slice_list_item_cb on_item;
	void *userdata;
};

static int relay_item(void *userdata, struct json_span element)
{
	struct relay *r = userdata;
	return r->on_item(r->userdata, element.p, element.len);
}

int slice_list_body_scan(const char *body, size_t len, slice_list_item_cb on_item, void *userdata,
			 struct json_object **ret_metadata)
{
	struct json_span all;
	struct top t = { .have_items = false };
	int r;
	if (!body || len > (1u << 30) || json_text_value(body, len, &all) < 0 || *all.p != '{' ||
	    json_text_members(all, top_member, &t) < 0 || !t.have_items)
		return -EBADMSG;
	if (*t.items.p == '[') {
		struct relay relay = { on_item, userdata };
		if ((r = json_text_elements(t.items, relay_item, &relay)) < 0)
			return r;
	} else if (*t.items.p != 'n') {
		return -EBADMSG;	/* neither a list nor null */
	}
	struct json_object *metadata = NULL;
	if (t.have_meta && *t.meta.p == '{') {
		struct json_tokener *tok = json_tokener_new();
		if (!tok)
			return -ENOMEM;
		metadata = json_tokener_parse_ex(tok, t.meta.p, (int)t.meta.len);
		if (!metadata && json_tokener_get_error(tok) == json_tokener_continue)
			metadata = json_tokener_parse_ex(tok, "", 1);
		json_tokener_free(tok);
		if (!metadata)
			return -ENOMEM;	/* valid JSON json-c cannot hold: memory or depth */
	}
	if (ret_metadata)
		*ret_metadata = metadata;
	else
		json_object_put(metadata);
	return 0;
}
