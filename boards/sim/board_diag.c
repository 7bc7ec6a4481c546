/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Error messages for board files. The YAML loader gives a DOM without
 * positions, so when a later pass rejects a value we walk the YAML event
 * stream again along the value's path to find its line and column. This
 * only runs on the error path.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "agent/lib/err_msg.h"
#include "boards/sim/board_model.h"

#define LOCATE_MAX_DEPTH 64

struct locator {
	yaml_parser_t parser;
	const struct jpath *steps[LOCATE_MAX_DEPTH];
	size_t n_steps;
	unsigned line, column;
	bool found;
};

static bool next_event(struct locator *l, yaml_event_t *ev)
{
	return yaml_parser_parse(&l->parser, ev) != 0;
}

static void mark(struct locator *l, const yaml_mark_t *m)
{
	l->line = (unsigned)m->line + 1;
	l->column = (unsigned)m->column + 1;
}

/* Consumes the rest of the node whose start event is @start. */
static bool skip_node(struct locator *l, const yaml_event_t *start)
{
	int depth;

	if (start->type != YAML_MAPPING_START_EVENT && start->type != YAML_SEQUENCE_START_EVENT)
		return true;
	depth = 1;
	while (depth > 0) {
		yaml_event_t ev;

		if (!next_event(l, &ev))
			return false;
		if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		else if (ev.type == YAML_STREAM_END_EVENT)
			depth = 0;
		yaml_event_delete(&ev);
	}
	return true;
}

/* @node is the start event of the node at steps[0..depth). Stops at the
 * first match; returns false when parsing failed or the path is absent. */
static bool walk(struct locator *l, const yaml_event_t *node, size_t depth)
{
	const struct jpath *step;
	bool is_map = node->type == YAML_MAPPING_START_EVENT;

	if (depth == l->n_steps) {
		l->found = true;
		return true;
	}
	step = l->steps[depth];
	if ((is_map && !step->key) || (!is_map && node->type != YAML_SEQUENCE_START_EVENT) ||
	    (!is_map && step->key))
		return false;

	for (int index = 0;; index++) {
		yaml_event_t key, value;
		bool match;

		if (!next_event(l, &key))
			return false;
		if (key.type == YAML_MAPPING_END_EVENT || key.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&key);
			return false;
		}
		if (is_map) {
			match = key.type == YAML_SCALAR_EVENT &&
				strlen(step->key) == key.data.scalar.length &&
				!memcmp(step->key, key.data.scalar.value, key.data.scalar.length);
			if (!skip_node(l, &key) || !next_event(l, &value)) {
				yaml_event_delete(&key);
				return false;
			}
		} else {
			match = index == step->index;
			value = key;
			memset(&key, 0, sizeof(key));
		}
		if (match) {
			bool r;

			/* a mapping member is reported at its key, where the
			 * reader looks for a misspelt name */
			mark(l, is_map ? &key.start_mark : &value.start_mark);
			if (depth + 1 == l->n_steps) {
				l->found = true;
				r = true;
			} else {
				r = walk(l, &value, depth + 1);
			}
			if (is_map)
				yaml_event_delete(&key);
			yaml_event_delete(&value);
			return r;
		}
		if (is_map)
			yaml_event_delete(&key);
		bool ok = skip_node(l, &value);
		yaml_event_delete(&value);
		if (!ok)
			return false;
	}
}

bool board_locate(const char *text, size_t len, const struct jpath *at, unsigned *line,
		  unsigned *column)
{
	struct locator l = { 0 };
	yaml_event_t ev;
	size_t n = 0;

	*line = *column = 0;
	for (const struct jpath *p = at; p; p = p->up)
		n++;
	if (!text || n > LOCATE_MAX_DEPTH)
		return false;
	l.n_steps = n;
	for (const struct jpath *p = at; p; p = p->up)
		l.steps[--n] = p;

	if (!yaml_parser_initialize(&l.parser))
		return false;
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)text, len);
	/* stream start, document start, root node */
	for (int i = 0; i < 3; i++) {
		if (!next_event(&l, &ev))
			goto out;
		if (i == 2) {
			mark(&l, &ev.start_mark);
			walk(&l, &ev, 0);
		}
		yaml_event_delete(&ev);
	}
out:
	yaml_parser_delete(&l.parser);
	*line = l.line;
	*column = l.column;
	return l.found;
}

int board_fail(const struct board_diag *d, const struct jpath *at, const char *fmt, ...)
{
	unsigned line = 0, column = 0;
	struct err_msg msg;
	va_list ap;

	if (!d->errlen)
		return -EINVAL;
	va_start(ap, fmt);
	err_vprintf(ERR_MSG_ARGS(&msg), 0, fmt, ap);
	va_end(ap);
	if (at)
		board_locate(d->text, d->text_len, at, &line, &column);
	if (line)
		return err_printf(d->err, d->errlen, -EINVAL, "%s: line %u column %u: %s", d->file,
				  line, column, msg.text);
	return err_printf(d->err, d->errlen, -EINVAL, "%s: %s", d->file, msg.text);
}
