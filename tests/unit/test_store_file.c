/* SPDX-License-Identifier: Apache-2.0 */
/* The file store: slices with the apiserver's semantics, claims from files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/slices/build.h"
#include "agent/kube/store_open.h"
#include "agent/slices/sync.h"

static char dir[64];

static void write_file(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dralet-store-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static struct slice_list *desired(size_t n, const char *model)
{
	struct dralet_attr a = { .name = "model", .type = DRALET_ATTR_STRING, .string_value = model };
	struct slice_device_in *devs = calloc(n, sizeof(*devs));
	char(*names)[16] = calloc(n, sizeof(*names));
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "nic-%03zu", i);
		devs[i] = (struct slice_device_in){ .name = names[i], .attrs = &a, .n_attrs = 1 };
	}
	struct slice_list *out = NULL;
	assert_int_equal(slice_build("net.dralet.dev", "node-1", NULL, devs, n, NULL, NULL, NULL, &out), 0);
	free(devs);
	free(names);
	return out;
}

/* The slices on disk: count, and the highest pool generation. */
static size_t on_disk(int64_t *ret_gen, char *first_name, size_t size)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/resourceslices", dir);
	DIR *d = opendir(path);
	assert_non_null(d);
	struct dirent *de;
	size_t n = 0;
	*ret_gen = -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char file[1024];
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		struct json_object *o = json_object_from_file(file), *spec, *pool, *g, *meta, *owner;
		assert_non_null(o);
		json_object_object_get_ex(o, "spec", &spec);
		json_object_object_get_ex(spec, "pool", &pool);
		json_object_object_get_ex(pool, "generation", &g);
		if (json_object_get_int64(g) > *ret_gen)
			*ret_gen = json_object_get_int64(g);
		json_object_object_get_ex(o, "metadata", &meta);
		assert_true(json_object_object_get_ex(meta, "uid", NULL));
		assert_true(json_object_object_get_ex(meta, "resourceVersion", NULL));
		/* the node file gives the owner reference */
		assert_true(json_object_object_get_ex(meta, "ownerReferences", &owner));
		assert_string_equal(json_object_get_string(json_object_object_get(
					    json_object_array_get_idx(owner, 0), "uid")), "node-uid-1");
		if (first_name && n == 0)
			snprintf(first_name, size, "%s", de->d_name);
		json_object_put(o);
		n++;
	}
	closedir(d);
	return n;
}

struct synced {
	int calls;
	int64_t generation;
};

static void on_synced(void *userdata, const char *driver, int64_t generation)
{
	struct synced *s = userdata;
	assert_string_equal(driver, "net.dralet.dev");
	s->calls++;
	s->generation = generation;
}

static void test_publish_semantics(void **state)
{
	(void)state;
	write_file("nodes/node-1.json", "{\"metadata\":{\"name\":\"node-1\",\"uid\":\"node-uid-1\"}}");
	struct synced sy = { 0 };
	struct store_options o = { .store_dir = dir, .node_name = "node-1", .on_synced = on_synced,
				   .userdata = &sy };
	struct store *st = NULL;
	char err[256];
	assert_int_equal(store_open(NULL, &o, &st, err, sizeof(err)), 0);
	assert_string_equal(st->ops->name, "file");
	int64_t gen;
	struct slice_list *d = desired(200, "cx7");
	assert_int_equal(st->ops->publish(st, "net.dralet.dev", d), 0);
	assert_int_equal(on_disk(&gen, NULL, 0), 2);
	assert_int_equal(gen, 1);
	assert_int_equal(sy.calls, 1);
	assert_int_equal(sy.generation, 1);
	struct store_stats stats;
	store_get_stats(st, &stats);
	assert_int_equal(stats.creates, 2);
	assert_int_equal(stats.slice_writes[SLICE_OP_CREATE][STORE_WRITE_OK], 2);
	assert_null(stats.requests_by);	/* no apiserver */
	/* unchanged content: no write */
	assert_int_equal(st->ops->publish(st, "net.dralet.dev", d), 0);
	store_get_stats(st, &stats);
	assert_int_equal(stats.creates + stats.updates + stats.deletes, 2);
	/* a device appears: one bump, slices rewritten by update */
	struct slice_list *d2 = desired(201, "cx7");
	assert_int_equal(st->ops->publish(st, "net.dralet.dev", d2), 0);
	assert_int_equal(on_disk(&gen, NULL, 0), 2);
	assert_int_equal(gen, 2);
	store_get_stats(st, &stats);
	assert_int_equal(stats.updates, 2);
	assert_int_equal(stats.creates, 2);
	/* a slice file deleted by someone: the next publish restores the pool */
	char name[300], path[700];
	on_disk(&gen, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/resourceslices/%s", dir, name);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(st->ops->publish(st, "net.dralet.dev", d2), 0);
	assert_int_equal(on_disk(&gen, NULL, 0), 2);
	/* the driver goes away: its slices go */
	struct slice_list *none = NULL;
	assert_int_equal(slice_list_new(&none), 0);
	assert_int_equal(st->ops->publish(st, "net.dralet.dev", none), 0);
	assert_int_equal(on_disk(&gen, NULL, 0), 0);
	assert_int_equal(st->ops->publish(st, "net.dralet.dev", NULL), -EINVAL);
	assert_int_equal(st->ops->publish(st, NULL, none), -EINVAL);
	slice_list_unref(none);
	slice_list_unref(d);
	slice_list_unref(d2);
	st->ops->destroy(st);
}

struct claim_result {
	int calls, err;
	char name[64], message[512];
};

static void on_claim(void *userdata, int err, struct json_object *claim, const char *message)
{
	struct claim_result *r = userdata;
	r->calls++;
	r->err = err;
	snprintf(r->message, sizeof(r->message), "%s", message ? message : "");
	r->name[0] = '\0';
	if (claim) {
		struct json_object *meta, *n;
		json_object_object_get_ex(claim, "metadata", &meta);
		json_object_object_get_ex(meta, "name", &n);
		snprintf(r->name, sizeof(r->name), "%s", json_object_get_string(n));
	}
}

static void test_claims(void **state)
{
	(void)state;
	write_file("resourceclaims/ns1/c-json.json",
		   "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
		   "\"metadata\":{\"name\":\"c-json\",\"namespace\":\"ns1\"}}");
	write_file("resourceclaims/ns1/c-yaml.yaml",
		   "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
		   "metadata: {name: c-yaml, namespace: ns1}\n");
	write_file("resourceclaims/ns1/broken.json", "{\"metadata\": ");
	uv_loop_t loop;
	uv_loop_init(&loop);
	struct store_options o = { .store_dir = dir, .node_name = "node-1" };
	struct store *st = NULL;
	char err[256];
	assert_int_equal(store_open(&loop, &o, &st, err, sizeof(err)), 0);
	struct claim_result r[5] = { 0 };
	st->ops->get_claim(st, "ns1", "c-json", on_claim, &r[0]);
	st->ops->get_claim(st, "ns1", "c-yaml", on_claim, &r[1]);
	st->ops->get_claim(st, "ns1", "missing", on_claim, &r[2]);
	st->ops->get_claim(st, "..", "etc", on_claim, &r[3]);	/* never leaves the directory */
	st->ops->get_claim(st, "ns1", "broken", on_claim, &r[4]);
	/* with a loop, answers come from the loop, never inside get_claim */
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i].calls, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(r[0].err, 0);
	assert_string_equal(r[0].name, "c-json");
	assert_int_equal(r[1].err, 0);
	assert_string_equal(r[1].name, "c-yaml");
	assert_int_equal(r[2].err, -ENOENT);
	assert_non_null(strstr(r[2].message, "not found"));
	assert_int_equal(r[3].err, -EINVAL);
	assert_int_equal(r[4].err, -EINVAL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i].calls, 1);
	/* destroy with an answer pending: no callback, no leak */
	struct claim_result late = { 0 };
	st->ops->get_claim(st, "ns1", "c-json", on_claim, &late);
	st->ops->destroy(st);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(late.calls, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static const char *field(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, a, &v) || (b && !json_object_object_get_ex(v, b, &v)))
		return "(missing)";
	return json_object_get_string(v);
}

/* record_event without an object: a core/v1 Event about the Node, as
 * client-go's recorder makes one, in DIR/events/<name>.json; a long message is
 * cut at a character boundary. */
static void test_warn_event(void **state)
{
	(void)state;
	struct store_options o = { .store_dir = dir, .node_name = "node-1" };
	struct store *st = NULL;
	char err[256], path[512], msg[1100];
	struct dirent *de;
	struct json_object *ev = NULL;
	DIR *d;
	int n = 0;

	assert_int_equal(store_open(NULL, &o, &st, err, sizeof(err)), 0);
	memset(msg, 'x', 1023);
	memcpy(msg + 1023, "\xc3\xa9 tail", 8);	/* a 2-byte character across the limit */
	st->ops->record_event(st, NULL, "Warning", "CheckpointUnreadable", msg);
	st->ops->destroy(st);
	snprintf(path, sizeof(path), "%s/events", dir);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		assert_int_equal(strncmp(de->d_name, "node-1.", 7), 0);
		snprintf(path, sizeof(path), "%s/events/%s", dir, de->d_name);
		assert_non_null(ev = json_object_from_file(path));
	}
	closedir(d);
	assert_int_equal(n, 1);
	assert_string_equal(field(ev, "apiVersion", NULL), "v1");
	assert_string_equal(field(ev, "kind", NULL), "Event");
	assert_string_equal(field(ev, "metadata", "namespace"), "default");
	assert_string_equal(field(ev, "involvedObject", "kind"), "Node");
	assert_string_equal(field(ev, "involvedObject", "name"), "node-1");
	assert_string_equal(field(ev, "involvedObject", "uid"), "node-1");
	assert_string_equal(field(ev, "type", NULL), "Warning");
	assert_string_equal(field(ev, "reason", NULL), "CheckpointUnreadable");
	assert_string_equal(field(ev, "source", "component"), "dralet");
	assert_string_equal(field(ev, "reportingInstance", NULL), "node-1");
	assert_int_equal(strlen(field(ev, "message", NULL)), 1023);
	assert_int_equal(json_object_get_int(json_object_object_get(ev, "count")), 1);
	json_object_put(ev);
}

/* An Event about a ResourceClaim lives in the claim's namespace; a repeat
 * rewrites the same file with count 2 (the recorder's counting). */
static void test_claim_event_repeat(void **state)
{
	(void)state;
	struct store_options o = { .store_dir = dir, .node_name = "node-1" };
	struct kube_object_ref claim = { .api_version = "resource.k8s.io/v1",
					 .kind = "ResourceClaim", .namespace_ = "team-a",
					 .name = "gpu-claim", .uid = "u-1" };
	struct store *st = NULL;
	struct store_stats stats;
	char err[256], path[512];
	struct dirent *de;
	struct json_object *ev = NULL;
	DIR *d;
	int n = 0;

	assert_int_equal(store_open(NULL, &o, &st, err, sizeof(err)), 0);
	st->ops->record_event(st, &claim, "Warning", "PrepareFailed", "driver x: no");
	st->ops->record_event(st, &claim, "Warning", "PrepareFailed", "driver x: no");
	store_get_stats(st, &stats);
	assert_int_equal(stats.events_sent, 2);
	st->ops->destroy(st);
	snprintf(path, sizeof(path), "%s/events", dir);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "gpu-claim.", 10))
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/events/%s", dir, de->d_name);
		assert_non_null(ev = json_object_from_file(path));
	}
	closedir(d);
	assert_int_equal(n, 1);
	assert_string_equal(field(ev, "metadata", "namespace"), "team-a");
	assert_string_equal(field(ev, "involvedObject", "apiVersion"), "resource.k8s.io/v1");
	assert_string_equal(field(ev, "involvedObject", "kind"), "ResourceClaim");
	assert_string_equal(field(ev, "involvedObject", "namespace"), "team-a");
	assert_string_equal(field(ev, "involvedObject", "uid"), "u-1");
	assert_string_equal(field(ev, "reason", NULL), "PrepareFailed");
	assert_int_equal(json_object_get_int(json_object_object_get(ev, "count")), 2);
	json_object_put(ev);
}

static void test_open_errors(void **state)
{
	(void)state;
	struct store *st = (struct store *)0x1;
	char err[256] = "";
	struct store_options o = { .store_dir = dir };
	assert_int_equal(store_open(NULL, &o, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "node name"));
	o.node_name = "n";
	o.kubeconfig = "/x";
	assert_int_equal(store_open(NULL, &o, &st, err, sizeof(err)), -EINVAL);
	o.kubeconfig = NULL;
	o.store_dir = "/proc/no/such/place";
	assert_true(store_open(NULL, &o, &st, err, sizeof(err)) < 0);
	assert_ptr_equal(st, (struct store *)0x1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_publish_semantics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warn_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_event_repeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
