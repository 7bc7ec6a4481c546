/* SPDX-License-Identifier: Apache-2.0 */
/* The watch-stream parser: bytes in, events out (json-c incremental tokener). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/watch.h"
#include "agent/lib/json_get.h"

/* A line buffer grown past this for a large event is freed after it: the
 * events of a quiet watch are few, and a ResourceSlice's can be 100 KiB. */
#define LINE_KEEP (16u << 10)

struct kube_watch_parser {
	struct json_tokener *tok;
	size_t max_event;
	char *line;		/* the line being received */
	size_t line_len, line_cap;
	size_t in_event;	/* bytes of earlier lines of the event being parsed */
	size_t events;
	bool broken;
};

static const char *const type_names[] = {
	[KUBE_WATCH_ADDED] = "ADDED",	  [KUBE_WATCH_MODIFIED] = "MODIFIED",
	[KUBE_WATCH_DELETED] = "DELETED", [KUBE_WATCH_BOOKMARK] = "BOOKMARK",
	[KUBE_WATCH_ERROR] = "ERROR",
};

int kube_watch_type_from_string(const char *s)
{
	for (size_t i = 0; s && i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(s, type_names[i]))
			return (int)i;
	return -EINVAL;
}

const char *kube_watch_type_name(enum kube_watch_type type)
{
	return (unsigned)type < sizeof(type_names) / sizeof(type_names[0]) ? type_names[type] : "?";
}

bool kube_watch_event_is_initial_end(const struct kube_watch_event *ev)
{
	const char *end = json_get_str_at(ev->object, JSON_PATH("metadata", "annotations",
								 "k8s.io/initial-events-end"));
	return ev->type == KUBE_WATCH_BOOKMARK && end && !strcmp(end, "true");
}

int kube_watch_parser_new(size_t max_event_bytes, struct kube_watch_parser **ret_parser)
{
	struct kube_watch_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->tok = json_tokener_new_ex(64);
	if (!p->tok) {
		free(p);
		return -ENOMEM;
	}
	json_tokener_set_flags(p->tok, JSON_TOKENER_STRICT);
	p->max_event = max_event_bytes ? max_event_bytes : KUBE_WATCH_DEFAULT_MAX_EVENT;
	*ret_parser = p;
	return 0;
}

void kube_watch_parser_free(struct kube_watch_parser *p)
{
	if (!p)
		return;
	json_tokener_free(p->tok);
	free(p->line);
	free(p);
}

void kube_watch_parser_reset(struct kube_watch_parser *p)
{
	json_tokener_reset(p->tok);
	p->line_len = 0;
	p->in_event = 0;
	p->events = 0;
	p->broken = false;
}

bool kube_watch_parser_idle(const struct kube_watch_parser *p)
{
	return p->in_event == 0 && p->line_len == 0 && !p->broken;
}

size_t kube_watch_parser_events(const struct kube_watch_parser *p)
{
	return p->events;
}

static int deliver(struct kube_watch_parser *p, struct json_object *obj, kube_watch_cb cb,
		   void *userdata)
{
	const char *type = json_get_str(obj, "type");
	struct json_object *object = json_get_object(obj, "object"), *code;
	if (!type || !object)
		return -EBADMSG;
	int t = kube_watch_type_from_string(type);
	if (t < 0)
		return -EBADMSG;
	struct kube_watch_event ev = {
		.type = (enum kube_watch_type)t,
		.object = object,
		.resource_version = json_get_str_at(object, JSON_PATH("metadata", "resourceVersion")),
	};
	if (ev.type == KUBE_WATCH_ERROR && (code = json_get_typed(object, "code", json_type_int)))
		ev.code = (int)json_object_get_int(code);
	p->events++;
	return cb ? cb(userdata, &ev) : 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t')
			return false;
	return true;
}

/* One complete line (with its newline) into the tokener. Whole lines only:
 * json-c's incremental tokener does not treat every split the same (invalid
 * UTF-8, for one), so the network's chunking must never reach it. */
static int parse_line(struct kube_watch_parser *p, const char *line, size_t len, kube_watch_cb cb,
		      void *userdata)
{
	if (p->in_event == 0 && blank(line, len))
		return 0;
	struct json_object *obj = json_tokener_parse_ex(p->tok, line, (int)len);
	enum json_tokener_error err = json_tokener_get_error(p->tok);
	if (!obj) {
		if (err != json_tokener_continue)
			return -EBADMSG;
		p->in_event += len;	/* an event spanning lines (pretty-printed) */
		return 0;
	}
	size_t used = json_tokener_get_parse_end(p->tok);
	json_tokener_reset(p->tok);
	p->in_event = 0;
	if (used < len && !blank(line + used, len - used)) {
		json_object_put(obj);
		return -EBADMSG;	/* two values on one line */
	}
	int r = deliver(p, obj, cb, userdata);
	json_object_put(obj);
	return r;
}

int kube_watch_parser_feed(struct kube_watch_parser *p, const char *buf, size_t len,
			   kube_watch_cb cb, void *userdata)
{
	if (p->broken)
		return -EBADMSG;
	while (len > 0) {
		const char *nl = memchr(buf, '\n', len);
		size_t take = nl ? (size_t)(nl - buf) + 1 : len;
		if (p->in_event + p->line_len + take > p->max_event) {
			p->broken = true;
			return -E2BIG;
		}
		int r;
		if (nl && p->line_len == 0) {
			r = parse_line(p, buf, take, cb, userdata);	/* no copy needed */
		} else {
			if (p->line_len + take > p->line_cap) {
				size_t cap = p->line_cap ? p->line_cap : 1024;
				while (cap < p->line_len + take)
					cap *= 2;
				char *l = realloc(p->line, cap);
				if (!l) {
					p->broken = true;
					return -ENOMEM;
				}
				p->line = l;
				p->line_cap = cap;
			}
			memcpy(p->line + p->line_len, buf, take);
			p->line_len += take;
			r = 0;
			if (nl) {
				r = parse_line(p, p->line, p->line_len, cb, userdata);
				p->line_len = 0;
				if (p->line_cap > LINE_KEEP) {	/* an idle watch holds no slice's size */
					free(p->line);
					p->line = NULL;
					p->line_cap = 0;
				}
			}
		}
		if (r < 0) {
			p->broken = true;
			return r;
		}
		buf += take;
		len -= take;
	}
	return 0;
}
