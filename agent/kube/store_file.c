/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The file store (--store DIR), the embedded default: slices are written as
 * DIR/resourceslices/<name>.json with the same sync plan, names, generations
 * and owner references the apiserver store produces, so the directory shows
 * exactly what a cluster would get. Claims are read from
 * DIR/resourceclaims/<namespace>/<name>.json (or .yaml/.yml). The Node's UID
 * for owner references comes from DIR/nodes/<node>.json when that exists.
 * Events (record_event) are written as DIR/events/<name>.json, a repeat
 * rewriting its Event's file with the new count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/kube/event.h"
#include "agent/kube/event_recorder.h"
#include "agent/lib/json_get.h"
#include "agent/lib/log.h"
#include "agent/core/k8s_names.h"
#include "agent/slices/json_tree.h"
#include "agent/slices/sync.h"
#include "agent/kube/store_open.h"
#include "agent/lib/yaml_load.h"
#include "agent/lib/err_msg.h"

struct store_file {
	struct store base;
	uv_loop_t *loop;
	char *dir, *slices_dir, *claims_dir, *nodes_dir, *events_dir;
	char *node_name;
	store_synced_cb on_synced;
	void *userdata;
	struct store_stats stats;
	struct claim_call *calls;	/* claim reads waiting for the loop */
	struct event_recorder *recorder;
	bool destroying;
	unsigned pending_closes;
};

/* One get_claim answered from the loop. The file is read only then, so a
 * batch of calls never holds more than one claim's tree at a time. */
struct claim_call {
	uv_timer_t timer;
	struct store_file *s;
	struct claim_call *next;
	store_claim_cb cb;
	void *userdata;
	char *namespace_, *name;
};

static struct store_file *to_file(struct store *s)
{
	return (struct store_file *)s;
}

static int mkdir_p(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			free(copy);
			return -e;
		}
		*p = '/';
	}
	int r = mkdir(copy, 0755) < 0 && errno != EEXIST ? -errno : 0;
	free(copy);
	return r;
}

/* ---- claims ---- */

static void on_call_closed(uv_handle_t *h)
{
	struct claim_call *call = h->data;
	struct store_file *s = call->s;
	free(call->namespace_);
	free(call->name);
	free(call);
	s->pending_closes--;
	if (s->destroying && s->pending_closes == 0)
		free(s);
}

static void call_release(struct claim_call *call)
{
	struct store_file *s = call->s;
	for (struct claim_call **pp = &s->calls; *pp; pp = &(*pp)->next)
		if (*pp == call) {
			*pp = call->next;
			break;
		}
	s->pending_closes++;
	uv_close((uv_handle_t *)&call->timer, on_call_closed);
}

/* Reads a claim; *ret_claim new, or -errno with @msg. */
static int read_claim(struct store_file *s, const char *ns, const char *name,
		      struct json_object **ret_claim, char *msg, size_t msglen)
{
	if (!k8s_valid_dns_label(ns) || !k8s_valid_dns_subdomain(name, 253))
		return err_printf(msg, msglen, -EINVAL, "invalid claim namespace or name");
	static const char *const exts[] = { "json", "yaml", "yml" };
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		char *path = NULL;
		if (asprintf(&path, "%s/%s/%s.%s", s->claims_dir, ns, name, exts[i]) < 0)
			return -ENOMEM;
		struct err_msg err;
		int r = yaml_load_file(path, ret_claim, ERR_MSG_ARGS(&err));
		if (r == -ENOENT) {
			free(path);
			continue;
		}
		if (r < 0)
			err_printf(msg, msglen, r, "%.*s: %s", 80, path,
				   r == -EINVAL ? err.text : strerror(-r));
		else if (!json_object_is_type(*ret_claim, json_type_object)) {
			json_object_put(*ret_claim);
			r = err_printf(msg, msglen, -EINVAL, "%s: not a ResourceClaim object",
				       path);
		}
		free(path);
		return r;
	}
	/* not found is a definite answer (the stale-claim check unprepares on it)
	 * only when the claims directory is there to say so */
	struct stat st;
	if (stat(s->claims_dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_printf(msg, msglen, -EIO, "cannot read resourceclaims %s/%s: %s is not "
				  "a directory", ns, name, s->claims_dir);
	return err_printf(msg, msglen, -ENOENT, "resourceclaims %s/%s not found in %s", ns, name,
			  s->claims_dir);
}

/* Reads the claim and answers; the claim's tree lives during @cb only. */
static void answer(struct store_file *s, const char *ns, const char *name, store_claim_cb cb,
		   void *userdata)
{
	struct json_object *claim = NULL;
	char message[512] = "";
	int err = read_claim(s, ns, name, &claim, message, sizeof(message));
	if (err == 0)
		message[0] = '\0';
	cb(userdata, err, claim, message);
	json_object_put(claim);
}

static void on_call_timer(uv_timer_t *t)
{
	struct claim_call *call = t->data;
	answer(call->s, call->namespace_, call->name, call->cb, call->userdata);
	call_release(call);
}

static void file_get_claim(struct store *st, const char *ns, const char *name, store_claim_cb cb,
			   void *userdata)
{
	struct store_file *s = to_file(st);
	if (!s->loop) {	/* no loop (one-shot commands): answer right away */
		answer(s, ns ? ns : "", name ? name : "", cb, userdata);
		return;
	}
	struct claim_call *call = calloc(1, sizeof(*call));
	if (!call || !(call->namespace_ = strdup(ns ? ns : "")) || !(call->name = strdup(name ? name : ""))) {
		if (call)
			free(call->namespace_);
		free(call);
		cb(userdata, -ENOMEM, NULL, "out of memory");
		return;
	}
	call->s = s;
	call->cb = cb;
	call->userdata = userdata;
	uv_timer_init(s->loop, &call->timer);
	call->timer.data = call;
	call->next = s->calls;
	s->calls = call;
	uv_timer_start(&call->timer, on_call_timer, 0, 0);
}

/* ---- slices ---- */

/* The contents of @path (new, NUL-terminated) or NULL. */
static char *read_text(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;
	if (!f)
		return NULL;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && st.st_size >= 0 && st.st_size < (1 << 30) &&
	    (text = malloc((size_t)st.st_size + 1))) {
		len = fread(text, 1, (size_t)st.st_size, f);
		text[len] = '\0';
	}
	fclose(f);
	*ret_len = len;
	return text;
}

/* Records of the slices of @driver on this node (one file, and one device's
 * tree, at a time), and the highest resourceVersion of all. */
static int read_existing(struct store_file *s, const char *driver, struct slice_list **ret_list,
			 uint64_t *ret_max_rv)
{
	DIR *dir = opendir(s->slices_dir);
	if (!dir)
		return -errno;
	struct slice_list *list = NULL;
	uint64_t max_rv = 0;
	struct dirent *de;
	int r = slice_list_new(&list);
	while (r == 0 && (de = readdir(dir))) {
		size_t len = strlen(de->d_name), text_len = 0;
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") || de->d_name[0] == '.')
			continue;
		char *path = NULL, *text;
		if (asprintf(&path, "%s/%s", s->slices_dir, de->d_name) < 0) {
			r = -ENOMEM;
			break;
		}
		text = read_text(path, &text_len);
		free(path);
		struct slice_record *rec = NULL;
		int e = text ? slice_record_from_text(text, text_len, SLICE_RECORD_PUBLISHED, &rec) : -EIO;
		free(text);
		if (e == -ENOMEM)
			r = e;
		if (e < 0)
			continue;	/* not a slice */
		const char *rv = rec->resource_version;
		if (rv && strtoull(rv, NULL, 10) > max_rv)
			max_rv = strtoull(rv, NULL, 10);
		if (rec->driver && rec->node_name && !strcmp(rec->driver, driver) &&
		    !strcmp(rec->node_name, s->node_name))
			r = slice_list_append(list, rec);
		else
			slice_record_free(rec);
	}
	closedir(dir);
	if (r < 0) {
		slice_list_unref(list);
		return r;
	}
	*ret_list = list;
	*ret_max_rv = max_rv;
	return 0;
}

#define FILE_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Writes @text and a newline to @path (through a temporary file). */
static int write_json_file(const char *path, const char *text, size_t len)
{
	char *tmp = NULL;
	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int r = 0;
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (!r && write(fd, "\n", 1) != 1)
		r = -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	free(tmp);
	return r;
}

static void random_bytes(unsigned char *buf, size_t n)
{
	if (getrandom(buf, n, 0) != (ssize_t)n)
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)rand();
}

/* The apiserver's name generator: base cut to 58 characters + 5 of these. */
static void generate_name(const char *base, char *out, size_t size)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned char rnd[5];
	random_bytes(rnd, sizeof(rnd));
	size_t blen = strlen(base);
	if (blen > 58)
		blen = 58;
	snprintf(out, size, "%.*s%c%c%c%c%c", (int)blen, base, alphabet[rnd[0] % 27],
		 alphabet[rnd[1] % 27], alphabet[rnd[2] % 27], alphabet[rnd[3] % 27],
		 alphabet[rnd[4] % 27]);
}

static void generate_uid(char *out, size_t size)
{
	unsigned char b[16];
	random_bytes(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, size,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
}

/* The Node's UID from DIR/nodes/<node>.json, or NULL. */
static char *node_uid(struct store_file *s)
{
	char *path = NULL, *uid = NULL;
	if (asprintf(&path, "%s/%s.json", s->nodes_dir, s->node_name) < 0)
		return NULL;
	struct json_object *node = json_object_from_file(path);
	free(path);
	const char *u = node ? json_get_str_at(node, JSON_PATH("metadata", "uid")) : NULL;
	if (u)
		uid = strdup(u);
	json_object_put(node);
	return uid;
}

static void set_meta(struct json_object *obj, const char *key, const char *value)
{
	struct json_object *meta = json_get_object(obj, "metadata");
	if (!meta) {
		meta = json_object_new_object();
		json_object_object_add(obj, "metadata", meta);
	}
	json_object_object_add(meta, key, json_object_new_string(value));
}

/* What a written slice gets: the server's part of metadata. */
struct write_edit {
	struct store_file *s;
	enum slice_op_type type;
	const char *owner_uid;		/* the Node's, or NULL */
	const char *resource_version;
	char path[4096];		/* CREATE: the file the name chosen makes */
};

static void edit_written(void *userdata, struct json_object *obj)
{
	struct write_edit *w = userdata;
	char name[64], uid[40], now[32];
	if (w->type != SLICE_OP_CREATE) {
		set_meta(obj, "resourceVersion", w->resource_version);
		return;
	}
	json_tree_set_node_owner(obj, w->s->node_name, w->owner_uid);
	const char *base = json_get_str_at(obj, JSON_PATH("metadata", "generateName"));
	struct stat st;
	do {
		generate_name(base ? base : "slice-", name, sizeof(name));
		snprintf(w->path, sizeof(w->path), "%s/%s.json", w->s->slices_dir, name);
	} while (stat(w->path, &st) == 0);
	generate_uid(uid, sizeof(uid));
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set_meta(obj, "name", name);
	set_meta(obj, "uid", uid);
	set_meta(obj, "resourceVersion", w->resource_version);
	set_meta(obj, "creationTimestamp", now);
}

/* Writes op @i of @plan, made one write at a time from the records' texts. */
static int apply_op(struct store_file *s, const struct slice_plan *plan, size_t i,
		    const char *owner_uid, uint64_t *rv)
{
	const struct slice_op *op = &plan->ops[i];
	const char *existing_name = op->name;
	char rvs[32], *text = NULL;
	size_t len = 0;
	int r;
	if (op->type != SLICE_OP_CREATE && (!existing_name || strchr(existing_name, '/')))
		return -EINVAL;
	struct write_edit w = { .s = s, .type = op->type, .owner_uid = owner_uid,
				.resource_version = rvs };
	switch (op->type) {
	case SLICE_OP_DELETE:
		snprintf(w.path, sizeof(w.path), "%s/%s.json", s->slices_dir, existing_name);
		if (unlink(w.path) < 0 && errno != ENOENT)
			return -errno;
		s->stats.deletes++;
		return 0;
	case SLICE_OP_UPDATE:
	case SLICE_OP_CREATE:
		snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)++*rv);
		if (op->type == SLICE_OP_UPDATE)
			snprintf(w.path, sizeof(w.path), "%s/%s.json", s->slices_dir, existing_name);
		if ((r = slice_plan_op_text(plan, i, FILE_FLAGS, edit_written, &w, &text, &len)) < 0)
			return r;
		r = write_json_file(w.path, text, len);
		free(text);
		if (r < 0)
			return r;
		if (op->type == SLICE_OP_UPDATE)
			s->stats.updates++;
		else
			s->stats.creates++;
		return 0;
	}
	return -EINVAL;
}

static int file_publish(struct store *st, const char *driver, struct slice_list *slices)
{
	struct store_file *s = to_file(st);
	struct slice_list *existing = NULL;
	struct slice_plan *plan = NULL;
	char *uid = NULL;
	uint64_t rv = 0;
	int r;
	if (!driver || !slices)
		return -EINVAL;
	if ((r = mkdir_p(s->slices_dir)) < 0) {
		log_error("file store: cannot create %s: %s", s->slices_dir, strerror(-r));
		return r;
	}
	if ((r = read_existing(s, driver, &existing, &rv)) < 0)
		goto out;
	if ((r = slice_plan_compute(existing, slices, s->node_name, 0, &plan)) < 0)
		goto out;
	uid = plan->n_create ? node_uid(s) : NULL;
	s->stats.syncs += plan->n_ops > 0;
	for (size_t i = 0; i < plan->n_ops; i++) {
		r = apply_op(s, plan, i, uid, &rv);
		s->stats.slice_writes[plan->ops[i].type][r < 0 ? STORE_WRITE_ERROR : STORE_WRITE_OK]++;
		if (r < 0)
			goto out;
	}
	if (plan->n_ops)
		log_info("file store: slices of %s in %s: generation %lld, %zu slice(s) (%zu created, "
			 "%zu updated, %zu deleted)", driver, s->slices_dir, (long long)plan->generation,
			 slices->n, plan->n_create, plan->n_update, plan->n_delete);
	if (s->on_synced)
		s->on_synced(s->userdata, driver, plan->generation);
out:
	if (r < 0)
		log_error("file store: publishing the slices of %s failed: %s", driver, strerror(-r));
	free(uid);
	slice_plan_free(plan);
	slice_list_unref(existing);
	store_release_memory();	/* the trees of the build and the writes are gone */
	return r;
}

/* The Event as the recorder says (event_recorder.h): a new one or a repeat
 * (its file rewritten with the count), or nothing when rate-limited. */
static void file_record_event(struct store *st, const struct kube_object_ref *obj,
			      const char *type, const char *reason, const char *message)
{
	struct store_file *s = to_file(st);
	struct kube_object_ref node = kube_node_ref(s->node_name);
	struct json_object *o = NULL;
	struct kube_event ev;
	struct timespec ts;
	char *path = NULL;
	const char *text;
	int r;

	clock_gettime(CLOCK_REALTIME, &ts);
	r = event_recorder_observe(s->recorder, obj ? obj : &node, type, reason, message,
				   (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, &ev);
	if (r == EVENT_SKIP) {
		s->stats.events_skipped++;
		log_debug("file store: Event %s about %s %s rate-limited", reason,
			  (obj ? obj : &node)->kind, (obj ? obj : &node)->name);
		return;
	}
	if (r >= 0)
		r = (o = kube_event_object(&ev)) ? mkdir_p(s->events_dir) : -ENOMEM;
	if (r >= 0)
		r = asprintf(&path, "%s/%s.json", s->events_dir, ev.name) < 0 ? -ENOMEM : 0;
	if (r >= 0) {
		text = json_object_to_json_string_ext(o, FILE_FLAGS);
		r = write_json_file(path, text, strlen(text));
	}
	if (r < 0)
		log_error("file store: cannot write the Event %s to %s: %s", reason,
			  s->events_dir, strerror(-r));
	else
		s->stats.events_sent++;
	free(path);
	json_object_put(o);
}

/* DIR/resourceclaimstatus/<namespace>/<name>/<driver>.json: the entries, or
 * no file when there are none. */
static void file_set_claim_status(struct store *st, const char *ns, const char *name,
				  const char *driver, struct json_object *devices)
{
	struct store_file *s = to_file(st);
	char *dir = NULL, *path = NULL;
	const char *text;
	int r = -EINVAL;

	if (ns && k8s_valid_dns_label(ns) && name && k8s_valid_dns_subdomain(name, 253) &&
	    driver && k8s_valid_driver_name(driver) &&
	    json_object_is_type(devices, json_type_array)) {
		r = asprintf(&dir, "%s/resourceclaimstatus/%s/%s", s->dir, ns, name) < 0 ||
				    asprintf(&path, "%s/%s.json", dir, driver) < 0
			    ? -ENOMEM
			    : 0;
	}
	if (r == 0 && json_object_array_length(devices) == 0) {
		if (unlink(path) < 0 && errno != ENOENT)
			r = -errno;
	} else if (r == 0 && (r = mkdir_p(dir)) == 0) {
		text = json_object_to_json_string_ext(devices, FILE_FLAGS);
		r = write_json_file(path, text, strlen(text));
	}
	if (r < 0)
		log_error("file store: cannot write the device status of claim %s/%s: %s",
			  ns ? ns : "?", name ? name : "?", strerror(-r));
	free(path);
	free(dir);
}

static void file_destroy(struct store *st)
{
	struct store_file *s = to_file(st);
	if (!s)
		return;
	free(s->dir);
	free(s->slices_dir);
	free(s->claims_dir);
	free(s->nodes_dir);
	free(s->events_dir);
	free(s->node_name);
	event_recorder_free(s->recorder);
	s->recorder = NULL;
	s->destroying = true;
	while (s->calls)
		call_release(s->calls);	/* their callbacks are not called */
	if (s->pending_closes == 0)
		free(s);
}

static const struct store_ops file_ops = {
	.name = "file",
	.get_claim = file_get_claim,
	.publish = file_publish,
	.record_event = file_record_event,
	.set_claim_status = file_set_claim_status,
	.destroy = file_destroy,
};

int store_file_new(uv_loop_t *loop, const struct store_options *opts, struct store **ret_store,
		   char *err, size_t errlen)
{
	if (!opts->store_dir || !*opts->store_dir || !opts->node_name) {
		return err_printf(err, errlen, -EINVAL, "file store: no directory or node name");
	}
	struct store_file *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.ops = &file_ops;
	s->loop = loop;
	s->on_synced = opts->on_synced;
	s->userdata = opts->userdata;
	if (!(s->dir = strdup(opts->store_dir)) || !(s->node_name = strdup(opts->node_name)) ||
	    asprintf(&s->slices_dir, "%s/resourceslices", s->dir) < 0 ||
	    asprintf(&s->claims_dir, "%s/resourceclaims", s->dir) < 0 ||
	    asprintf(&s->nodes_dir, "%s/nodes", s->dir) < 0 ||
	    asprintf(&s->events_dir, "%s/events", s->dir) < 0 ||
	    event_recorder_new(s->node_name, &s->recorder) < 0) {
		file_destroy(&s->base);
		return -ENOMEM;
	}
	int r = mkdir_p(s->slices_dir);
	if (r < 0) {
		err_printf(err, errlen, r, "file store: cannot create %s: %s", s->slices_dir,
			   strerror(-r));
		file_destroy(&s->base);
		return r;
	}
	*ret_store = &s->base;
	return 0;
}

void store_file_get_stats(struct store *st, struct store_stats *ret_stats)
{
	*ret_stats = to_file(st)->stats;
}
