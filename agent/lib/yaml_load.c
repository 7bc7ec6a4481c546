/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/lib/yaml_load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/lib/err_msg.h"

#define YAML_MAX_DEPTH 256
#define YAML_MAX_ANCHORS 1024
#define YAML_MAX_FILE (64u << 20)
/* Aliases share objects, but whoever walks the result (the emitter, a
 * validator) sees them expanded: bound the expanded size ("billion laughs"). */
#define YAML_MAX_EXPANDED_NODES 1000000u

struct anchor {
	char *name;
	struct json_object *obj;
	size_t nodes;		/* expanded node count; 0 while still being built */
};

struct loader {
	yaml_parser_t parser;
	struct anchor anchors[YAML_MAX_ANCHORS];
	size_t n_anchors;
	char *err;
	size_t errlen;
	unsigned depth;
	size_t nodes;		/* expanded nodes so far */
};

static int fail(struct loader *l, const yaml_mark_t *mark, const char *what)
{
	return err_printf(l->err, l->errlen, -EINVAL, "line %zu column %zu: %s", mark->line + 1,
			  mark->column + 1, what);
}

static bool is_int(const char *s, int64_t *ret)
{
	char *end;
	int base = 10;
	const char *p = s;
	bool neg = false;

	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && p[1] == 'o') {
		base = 8;
		p += 2;
	}
	if (!*p)
		return false;
	for (const char *q = p; *q; q++) {
		bool ok = base == 16 ? !!strchr("0123456789abcdefABCDEF", *q)
			  : base == 8 ? (*q >= '0' && *q <= '7')
				      : (*q >= '0' && *q <= '9');
		if (!ok)
			return false;
	}
	errno = 0;
	unsigned long long v = strtoull(p, &end, base);
	if (errno || *end || v > (unsigned long long)INT64_MAX + neg)
		return false;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static bool is_float(const char *s, double *ret)
{
	char *end;
	bool digit = false, dot_or_exp = false;

	for (const char *p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digit = true;
		else if (*p == '.' || *p == 'e' || *p == 'E')
			dot_or_exp = true;
		else if (*p != '-' && *p != '+')
			return false;
	}
	if (!digit || !dot_or_exp)
		return false;
	errno = 0;
	*ret = strtod(s, &end);
	return !errno && !*end;
}

static struct json_object *scalar(const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	int64_t i;
	double d;

	if (tag && !strcmp(tag, YAML_STR_TAG))
		return json_object_new_string_len(v, (int)len);
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_object_new_string_len(v, (int)len);
	if (len == 0 || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	    !strcmp(v, "NULL"))
		return NULL;
	if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
		return json_object_new_boolean(1);
	if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
		return json_object_new_boolean(0);
	if (strlen(v) == len && is_int(v, &i))
		return json_object_new_int64(i);
	if (strlen(v) == len && is_float(v, &d))
		return json_object_new_double(d);
	return json_object_new_string_len(v, (int)len);
}

/* Records an anchor; its expanded size is set by complete() once the node is
 * done, so an alias to a node still being built (a cycle) is refused. */
static int remember(struct loader *l, const yaml_event_t *ev, const yaml_char_t *anchor,
		    struct json_object *obj)
{
	if (!anchor)
		return 0;
	if (l->n_anchors == YAML_MAX_ANCHORS)
		return fail(l, &ev->start_mark, "too many anchors");
	l->anchors[l->n_anchors].name = strdup((const char *)anchor);
	if (!l->anchors[l->n_anchors].name)
		return -ENOMEM;
	l->anchors[l->n_anchors].nodes = 0;
	l->anchors[l->n_anchors++].obj = json_object_get(obj);
	return 0;
}

static void complete(struct loader *l, const yaml_char_t *anchor, size_t nodes_before)
{
	if (!anchor)
		return;
	for (size_t i = l->n_anchors; i-- > 0;)
		if (!strcmp(l->anchors[i].name, (const char *)anchor) && !l->anchors[i].nodes) {
			l->anchors[i].nodes = l->nodes - nodes_before;
			return;
		}
}

static int count_node(struct loader *l, const yaml_mark_t *mark, size_t n)
{
	l->nodes += n;
	return l->nodes > YAML_MAX_EXPANDED_NODES ? fail(l, mark, "document too large "
							   "(aliases expand to too many nodes)")
						  : 0;
}

static int parse_node(struct loader *l, yaml_event_t *ev, struct json_object **ret);

static int next_event(struct loader *l, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&l->parser, ev))
		return fail(l, &l->parser.problem_mark,
			    l->parser.problem ? l->parser.problem : "syntax error");
	return 0;
}

static int parse_sequence(struct loader *l, yaml_event_t *start, struct json_object **ret)
{
	struct json_object *arr = json_object_new_array();
	int r = remember(l, start, start->data.sequence_start.anchor, arr);

	while (r == 0) {
		yaml_event_t ev;
		struct json_object *item = NULL;

		r = next_event(l, &ev);
		if (r < 0)
			break;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			*ret = arr;
			return 0;
		}
		r = parse_node(l, &ev, &item);
		yaml_event_delete(&ev);
		if (r == 0)
			json_object_array_add(arr, item);
	}
	json_object_put(arr);
	return r;
}

static int parse_mapping(struct loader *l, yaml_event_t *start, struct json_object **ret)
{
	struct json_object *obj = json_object_new_object();
	int r = remember(l, start, start->data.mapping_start.anchor, obj);

	while (r == 0) {
		yaml_event_t kev, vev;
		struct json_object *val = NULL;

		r = next_event(l, &kev);
		if (r < 0)
			break;
		if (kev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&kev);
			*ret = obj;
			return 0;
		}
		if (kev.type != YAML_SCALAR_EVENT) {
			r = fail(l, &kev.start_mark, "mapping keys must be scalars");
			yaml_event_delete(&kev);
			break;
		}
		char *key = strndup((const char *)kev.data.scalar.value, kev.data.scalar.length);
		yaml_mark_t kmark = kev.start_mark;
		yaml_event_delete(&kev);
		if (!key) {
			r = -ENOMEM;
			break;
		}
		if (!strcmp(key, "<<")) {
			free(key);
			r = fail(l, &kmark, "merge keys (<<) are not supported");
			break;
		}
		if (json_object_object_get_ex(obj, key, NULL)) {
			free(key);
			r = fail(l, &kmark, "duplicate mapping key");
			break;
		}
		r = next_event(l, &vev);
		if (r == 0) {
			r = parse_node(l, &vev, &val);
			yaml_event_delete(&vev);
		}
		if (r == 0)
			json_object_object_add(obj, key, val);
		free(key);
	}
	json_object_put(obj);
	return r;
}

static int parse_node(struct loader *l, yaml_event_t *ev, struct json_object **ret)
{
	size_t before = l->nodes;
	int r;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if ((r = count_node(l, &ev->start_mark, 1)) < 0)
			return r;
		*ret = scalar(ev);
		r = remember(l, ev, ev->data.scalar.anchor, *ret);
		complete(l, ev->data.scalar.anchor, before);
		return r;
	case YAML_ALIAS_EVENT:
		/* the latest anchor of that name counts, as in YAML */
		for (size_t i = l->n_anchors; i-- > 0;)
			if (!strcmp(l->anchors[i].name, (const char *)ev->data.alias.anchor)) {
				if (!l->anchors[i].nodes)
					return fail(l, &ev->start_mark, "recursive alias");
				if ((r = count_node(l, &ev->start_mark, l->anchors[i].nodes)) < 0)
					return r;
				*ret = json_object_get(l->anchors[i].obj);
				return 0;
			}
		return fail(l, &ev->start_mark, "unknown alias");
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (++l->depth > YAML_MAX_DEPTH)
			return fail(l, &ev->start_mark, "nesting too deep");
		if ((r = count_node(l, &ev->start_mark, 1)) < 0)
			return r;
		if (ev->type == YAML_SEQUENCE_START_EVENT) {
			r = parse_sequence(l, ev, ret);
			if (r == 0)
				complete(l, ev->data.sequence_start.anchor, before);
		} else {
			r = parse_mapping(l, ev, ret);
			if (r == 0)
				complete(l, ev->data.mapping_start.anchor, before);
		}
		l->depth--;
		return r;
	default:
		return fail(l, &ev->start_mark, "unexpected YAML event");
	}
}

int yaml_load_buffer(const char *buf, size_t len, struct json_object **ret_obj, char *err,
		     size_t errlen)
{
	struct loader l = { .err = err, .errlen = errlen };
	struct json_object *root = NULL;
	yaml_event_t ev;
	int r;

	if (errlen)
		err[0] = '\0';
	if (!yaml_parser_initialize(&l.parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)buf, len);

	/* stream start, document start (or stream end: empty input = null) */
	r = next_event(&l, &ev);
	if (r == 0) {
		yaml_event_delete(&ev);
		r = next_event(&l, &ev);
	}
	if (r == 0 && ev.type == YAML_DOCUMENT_START_EVENT) {
		yaml_event_delete(&ev);
		r = next_event(&l, &ev);
		if (r == 0) {
			r = parse_node(&l, &ev, &root);
			yaml_event_delete(&ev);
		}
	} else if (r == 0) {
		yaml_event_delete(&ev);
	}

	for (size_t i = 0; i < l.n_anchors; i++) {
		free(l.anchors[i].name);
		json_object_put(l.anchors[i].obj);
	}
	yaml_parser_delete(&l.parser);
	if (r < 0) {
		json_object_put(root);
		return r;
	}
	*ret_obj = root;
	return 0;
}

int yaml_load_file(const char *path, struct json_object **ret_obj, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t off = 0;
	int r, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > YAML_MAX_FILE) {
		r = fstat(fd, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : -EFBIG;
		close(fd);
		return r;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st.st_size && (n = read(fd, buf + off, (size_t)st.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	r = yaml_load_buffer(buf, off, ret_obj, err, errlen);
	free(buf);
	return r;
}
