/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/core/backend_call.h"

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

char *tree_new(void)
{
	char tmpl[] = "/tmp/dralet-test-XXXXXX";
	char *dir = mkdtemp(tmpl) ? strdup(tmpl) : NULL;

	if (dir) {
		tree_mkdir(dir, "sys");
		tree_mkdir(dir, "dev");
		tree_mkdir(dir, "proc");
	}
	return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tree_remove(char *dir)
{
	if (!dir)
		return;
	nftw(dir, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

int tree_mkdir(const char *dir, const char *relpath)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/", dir, relpath);
	return mkdirs(path);
}

int tree_write(const char *dir, const char *relpath, const char *content)
{
	char path[4096];
	size_t len = strlen(content);
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, relpath);
	if ((r = mkdirs(path)) < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, content, len) != (ssize_t)len ||
	    (len && content[len - 1] != '\n' && write(fd, "\n", 1) != 1))
		r = -EIO;
	close(fd);
	return r;
}

int tree_link(const char *dir, const char *relpath, const char *target)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, relpath);
	if ((r = mkdirs(path)) < 0)
		return r;
	unlink(path);
	return symlink(target, path) < 0 ? -errno : 0;
}

int tree_add_pci(const char *dir, const char *parent_path, const char *address,
		 unsigned vendor, unsigned device, unsigned class_code)
{
	char rel[4096], val[32], link[4096];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/vendor", parent_path, address);
	snprintf(val, sizeof(val), "0x%04x", vendor);
	tree_write(dir, rel, val);
	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/device", parent_path, address);
	snprintf(val, sizeof(val), "0x%04x", device);
	tree_write(dir, rel, val);
	snprintf(rel, sizeof(rel), "sys/devices/%s/%s/class", parent_path, address);
	snprintf(val, sizeof(val), "0x%06x", class_code);
	tree_write(dir, rel, val);
	/* the kernel always has these; without them libpci falls back to config */
	static const char *const zero_files[] = { "revision", "subsystem_vendor",
						  "subsystem_device" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(rel, sizeof(rel), "sys/devices/%s/%s/%s", parent_path, address,
			 zero_files[i]);
		tree_write(dir, rel, i ? "0x0000" : "0x00");
	}
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", address);
	snprintf(link, sizeof(link), "../../../devices/%s/%s", parent_path, address);
	return tree_link(dir, rel, link);
}

int harness_init(struct harness *h, const struct dralet_backend *backend, const char *dir,
		 const char *options_json)
{
	int r;

	memset(h, 0, sizeof(*h));
	backend_fill_defaults(backend, &h->ops);
	h->ctx.backend = &h->ops;
	h->ctx.driver = backend->default_driver;
	if (options_json) {
		h->ctx.options = json_tokener_parse(options_json);
		if (!h->ctx.options)
			return -EINVAL;
	}
	snprintf(h->sys, sizeof(h->sys), "%s/sys", dir ? dir : "/nonexistent");
	snprintf(h->dev, sizeof(h->dev), "%s/dev", dir ? dir : "/nonexistent");
	snprintf(h->proc, sizeof(h->proc), "%s/proc", dir ? dir : "/nonexistent");
	h->roots = (struct hal_roots){ h->sys, h->dev, h->proc };
	h->ctx.roots = &h->roots;
	if (dir) {
		static const struct hal_scan_options opts = { .no_names = true };
		r = hal_scan(&h->roots, &opts, &h->scan);
		if (r < 0)
			return r;
		h->ctx.scan = h->scan;
	}
	h->ctx.sink = &h->sink;	/* init may make devices without a PCI function */
	r = backend_call_init(&h->ctx);
	h->ctx.sink = NULL;
	return r;
}

int harness_probe(struct harness *h, const struct dralet_pci_func *f)
{
	int score;
	const struct dralet_pci_id *id = backend_table_match(h->ctx.backend, f, &score);

	return backend_call_probe(&h->ctx, &h->sink, f, id);
}

int harness_score(struct harness *h, const struct dralet_backend *b, const struct dralet_pci_func *f)
{
	struct dralet_backend ops;
	struct dralet_backend_ctx ctx = h->ctx;
	const struct dralet_pci_id *id;

	backend_fill_defaults(b, &ops);
	ctx.backend = &ops;
	return backend_call_score(&ctx, f, &id);
}

int harness_probe_all(struct harness *h)
{
	for (size_t i = 0; h->scan && i < h->scan->n_funcs; i++) {
		const struct dralet_pci_func *f = h->scan->funcs[i];
		const struct dralet_pci_id *id;
		if ((f->class_code >> 16) == 0x06 || backend_call_score(&h->ctx, f, &id) <= 0)
			continue;
		int r = backend_call_probe(&h->ctx, &h->sink, f, id);
		if (r < 0)
			return r;
	}
	return 0;
}

static int probe_nothing(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			 const struct dralet_pci_id *id)
{
	(void)ctx;
	(void)f;
	(void)id;
	return 0;
}

static const struct dralet_pci_id no_ids[] = { { 0, 0, 0, 0 } };

const struct dralet_backend harness_plain_backend = {
	.abi = DRALET_BACKEND_ABI, .name = "test", .family = "accel",
	.default_driver = "accel.dralet.dev", .ids = no_ids, .probe = probe_nothing,
};

int harness_add_devices(struct harness *h, struct dralet_pci_func *funcs, size_t n,
			struct dralet_device **ret)
{
	h->ctx.sink = &h->sink;
	for (size_t i = 0; i < n; i++) {
		int r;
		memset(&funcs[i], 0, sizeof(funcs[i]));
		funcs[i].vf_index = -1;
		snprintf(funcs[i].address, sizeof(funcs[i].address), "0000:%02x:00.0",
			 (unsigned)(i + 1) & 0xff);
		if ((r = dralet_device_new(&h->ctx, &funcs[i], "accel", NULL, &ret[i])) < 0)
			return r;
		dralet_device_set_health(ret[i], DRALET_HEALTH_HEALTHY);
	}
	return 0;
}

struct dralet_device *harness_device(struct harness *h, const char *name)
{
	for (size_t i = 0; i < h->sink.n; i++)
		if (!strcmp(dralet_device_name(h->sink.items[i]), name))
			return h->sink.items[i];
	return NULL;
}

void harness_fini(struct harness *h)
{
	device_sink_clear(&h->sink, &h->ctx);
	if (h->ctx.state)
		backend_call_fini(&h->ctx);
	hal_scan_free(h->scan);
	json_object_put(h->ctx.options);
}

const char *attr_string(const struct dralet_device *d, const char *name)
{
	const struct dralet_attr *a = dralet_device_find_attr(d, name);
	return a && (a->type == DRALET_ATTR_STRING || a->type == DRALET_ATTR_VERSION)
		       ? a->string_value : NULL;
}

long long attr_int(const struct dralet_device *d, const char *name, long long missing)
{
	const struct dralet_attr *a = dralet_device_find_attr(d, name);
	return a && a->type == DRALET_ATTR_INT ? a->int_value : missing;
}

const char *capacity(const struct dralet_device *d, const char *name)
{
	for (size_t i = 0; i < dralet_device_n_capacities(d); i++)
		if (!strcmp(dralet_device_capacity(d, i)->name, name))
			return dralet_device_capacity(d, i)->quantity;
	return NULL;
}
