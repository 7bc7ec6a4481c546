/* SPDX-License-Identifier: Apache-2.0 */
/* A slice's devices apart from the rest of its text (see devices_text.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/json_get.h"
#include "agent/slices/devices_text.h"
#include "agent/slices/json_tree.h"

/* Control characters: no device data, name or label holds them. */
#define PLACEHOLDER "\001dralet:spec.devices\001"

struct json_object *slice_devices_placeholder(void)
{
	return json_object_new_string(PLACEHOLDER);
}

bool slice_is_devices_placeholder(struct json_object *v)
{
	return v && json_object_is_type(v, json_type_string) &&
	       !strcmp(json_object_get_string(v), PLACEHOLDER);
}

int slice_text_light(const char *text, size_t len, struct json_object **ret_light,
		     struct json_span *ret_devices)
{
	struct json_span all, spec, devices;
	if (len > (1u << 30) || json_text_value(text, len, &all) < 0 || *all.p != '{')
		return -EINVAL;
	if (json_text_member(all, "spec", &spec) < 0 || *spec.p != '{' ||
	    json_text_member(spec, "devices", &devices) < 0 || *devices.p != '[')
		return -ENOENT;
	static const char quoted[] = "\"\\u0001dralet:spec.devices\\u0001\"";
	size_t head = (size_t)(devices.p - all.p), tail = all.len - head - devices.len;
	size_t light_len = head + sizeof(quoted) - 1 + tail;
	char *light_text = malloc(light_len + 1);
	if (!light_text)
		return -ENOMEM;
	memcpy(light_text, all.p, head);
	memcpy(light_text + head, quoted, sizeof(quoted) - 1);
	memcpy(light_text + head + sizeof(quoted) - 1, devices.p + devices.len, tail);
	light_text[light_len] = '\0';
	struct json_object *light = json_tree_parse_object(light_text, light_len);
	free(light_text);
	if (!light)
		return -ENOMEM;	/* valid JSON that json-c cannot hold: memory (or depth) */
	/* Keys spelled with escapes, repeated keys: json-c decides which member
	 * counts; when that is not the one taken apart, parse it whole. */
	if (!slice_is_devices_placeholder(json_get_at(light, JSON_PATH("spec", "devices")))) {
		json_object_put(light);
		return -ENOENT;
	}
	*ret_light = light;
	*ret_devices = devices;
	return 0;
}

int slice_text_join(struct json_object *obj, int flags, struct json_span devices, char **ret_text,
		    size_t *ret_len)
{
	struct json_object *ph = slice_devices_placeholder();
	if (!ph)
		return -ENOMEM;
	size_t tlen = 0, plen = 0;
	const char *t = json_object_to_json_string_length(obj, flags, &tlen);
	const char *pt = json_object_to_json_string_length(ph, flags, &plen);
	const char *at = t && pt ? memmem(t, tlen, pt, plen) : NULL;
	int r = -EINVAL;
	if (!t || !pt) {
		r = -ENOMEM;
		goto out;
	}
	if (!at || memmem(at + plen, tlen - (size_t)(at - t) - plen, pt, plen))
		goto out;
	struct json_text_buf b = { 0 };
	r = json_text_buf_add(&b, t, (size_t)(at - t));
	if (r == 0 && (flags & JSON_C_TO_STRING_PRETTY)) {
		/* nested as deep as its line is indented (two spaces a level) */
		const char *line = at;
		while (line > t && line[-1] != '\n')
			line--;
		unsigned level = 0;
		while (line + 2 * (level + 1) <= at && line[2 * level] == ' ' && line[2 * level + 1] == ' ')
			level++;
		r = json_text_pretty(devices, level, &b);
	} else if (r == 0) {
		r = json_text_buf_add(&b, devices.p, devices.len);
	}
	if (r == 0)
		r = json_text_buf_add(&b, at + plen, tlen - (size_t)(at - t) - plen);
	if (r < 0) {
		json_text_buf_free(&b);
		goto out;
	}
	*ret_text = b.p;
	if (ret_len)
		*ret_len = b.len;
out:
	json_object_put(ph);
	return r;
}
