/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Board file → model: the top level, NUMA nodes, host bridges and the PCI
 * function tree (with templates). Class devices and vendor extras of a
 * function are in board_parse_dev.c. Format: docs/boards.md.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boards/sim/board_parse.h"

static const char *const top_keys[] = {
	"board", "description", "hostname", "boot_id", "kernel", "iommu", "numa", "nvidia",
	"templates", "pci", "mounts", "default_route", "default_route6", "rxe", "platform",
	"configfs_overlays", NULL,
};

static const char *const func_keys[] = {
	"bdf", "type", "use", "id", "subsystem", "class", "rev", "driver", "numa",
	"iommu_group", "irq", "link", "max_link", "label", "acpi_index", "slot", "boot_vga",
	"bars", "bus", "files", "aer", "sriov", "net", "infiniband", "drm", "fpga_managers",
	"fpga_regions", "dfl", "nvme", "nvidia", "chardevs", "kfd", "devices", NULL,
};

static const struct {
	const char *name;
	enum board_port_kind kind;
} kinds[] = {
	{ "endpoint", BOARD_ENDPOINT },
	{ "rciep", BOARD_RCIEP },
	{ "root-port", BOARD_ROOT_PORT },
	{ "switch-upstream", BOARD_SWITCH_UP },
	{ "switch-downstream", BOARD_SWITCH_DOWN },
	{ "pci-bridge", BOARD_PCI_BRIDGE },
};

static bool hex_field(const char *s, size_t n, unsigned *ret)
{
	unsigned v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		v = v * 16 + (unsigned)(isdigit((unsigned char)s[i]) ? s[i] - '0'
								  : tolower((unsigned char)s[i]) - 'a' + 10);
	}
	*ret = v;
	return true;
}

/* "DDDD:BB:DD.F" or "BB:DD.F" (the domain then comes from the root). */
static bool parse_bdf(const char *s, unsigned root_domain, unsigned *domain, unsigned *bus,
		      unsigned *dev, unsigned *fn)
{
	size_t len = strlen(s);
	const char *rest = s;

	*domain = root_domain;
	if (len == 12 || len == 13) {
		size_t dl = len - 8;

		if (s[dl] != ':' || !hex_field(s, dl, domain))
			return false;
		rest = s + dl + 1;
	} else if (len != 7) {
		return false;
	}
	if (rest[2] != ':' || rest[5] != '.' || !hex_field(rest, 2, bus) ||
	    !hex_field(rest + 3, 2, dev) || rest[6] < '0' || rest[6] > '7')
		return false;
	*fn = (unsigned)(rest[6] - '0');
	return *dev < 32;
}

static int merge_into(struct json_object *dst, struct json_object *src)
{
	json_object_object_foreach(src, key, val) {
		struct json_object *old = NULL;

		if (json_object_object_get_ex(dst, key, &old) &&
		    json_object_is_type(old, json_type_object) &&
		    json_object_is_type(val, json_type_object)) {
			int r = merge_into(old, val);

			if (r < 0)
				return r;
			continue;
		}
		if (json_object_object_add(dst, key, json_object_get(val)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Resolves `use: <template>`: *ret is a new object (template overlaid with
 * the function's own keys) or a new reference to @obj. */
static int apply_template(struct pctx *c, struct json_object *obj, const struct jpath *at,
			  struct json_object **ret)
{
	const char *name = NULL;
	struct json_object *tmpl = NULL, *copy = NULL;
	struct jpath up = JP_KEY(at, "use");
	int r = p_str(c, obj, "use", at, &name);

	if (r < 0)
		return r;
	if (r == 0) {
		*ret = json_object_get(obj);
		return 0;
	}
	if (!c->templates || !json_object_object_get_ex(c->templates, name, &tmpl))
		return board_fail(c->d, &up, "no template named '%s' (define it under 'templates:')",
				  name);
	if (json_object_deep_copy(tmpl, &copy, NULL) < 0)
		return -ENOMEM;
	r = merge_into(copy, obj);
	if (r < 0) {
		json_object_put(copy);
		return r;
	}
	*ret = copy;
	return 0;
}

static int parse_files(struct pctx *c, struct board_func *f, struct json_object *obj,
		       const struct jpath *at)
{
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "files");
	size_t n = 0;
	int r;

	if (!json_object_object_get_ex(obj, "files", &v) || !v)
		return 0;
	r = p_expect_object(c, v, &kp, "'files'");
	if (r < 0)
		return r;
	f->files = arena_alloc(c->a, (size_t)json_object_object_length(v) * sizeof(*f->files) + 1);
	if (!f->files)
		return -ENOMEM;
	json_object_object_foreach(v, name, content) {
		struct jpath np = JP_KEY(&kp, name);
		struct board_file *file = &f->files[n];
		bool ok = name[0] && name[0] != '/' && !strstr(name, "//") &&
			  name[strlen(name) - 1] != '/';

		/* no component may be empty, "." or ".." */
		for (const char *p = name; ok && *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : "") {
			size_t len = strcspn(p, "/");

			ok = !(len == 1 && p[0] == '.') && !(len == 2 && p[0] == '.' && p[1] == '.');
		}
		if (!ok)
			return board_fail(c->d, &np, "file name '%s' must be a relative path "
					  "without '.' or '..' components", name);
		file->name = arena_strdup(c->a, name);
		switch (json_object_get_type(content)) {
		case json_type_null:
			file->content = "";
			break;
		case json_type_string: {
			const char *s = json_object_get_string(content);
			size_t len = strlen(s);

			/* sysfs attributes end in a newline; add it unless the
			 * text is empty or already has one */
			file->content = len && s[len - 1] != '\n' ? arena_printf(c->a, "%s\n", s)
								  : arena_strdup(c->a, s);
			break;
		}
		case json_type_int:
		case json_type_double:
		case json_type_boolean: {
			const char *t = NULL;

			r = p_text(c, v, name, &kp, &t);
			if (r < 0)
				return r;
			file->content = arena_printf(c->a, "%s\n", t);
			break;
		}
		default:
			return board_fail(c->d, &np, "file '%s' must hold text or null", name);
		}
		if (!file->name || !file->content)
			return -ENOMEM;
		n++;
	}
	f->n_files = n;
	return 0;
}

static int parse_aer(struct pctx *c, struct board_func *f, struct json_object *obj,
		     const struct jpath *at)
{
	static const char *const kinds_[] = { "correctable", "fatal", "nonfatal", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "aer");
	int r;

	if (!json_object_object_get_ex(obj, "aer", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'aer'", kinds_);
	if (r < 0)
		return r;
	for (int k = 0; k < 3; k++) {
		struct json_object *m = NULL;
		struct jpath mp = JP_KEY(&kp, kinds_[k]);
		size_t n = 0;

		if (!json_object_object_get_ex(v, kinds_[k], &m) || !m)
			continue;
		r = p_expect_object(c, m, &mp, kinds_[k]);
		if (r < 0)
			return r;
		f->aer[k] = arena_alloc(c->a, (size_t)json_object_object_length(m) *
						      sizeof(struct board_aer) + 1);
		if (!f->aer[k])
			return -ENOMEM;
		json_object_object_foreach(m, name, cnt) {
			long long x;

			(void)cnt;
			r = p_int(c, m, name, &mp, 0, 0xffffffffLL, &x);
			if (r < 0)
				return r;
			f->aer[k][n].name = arena_strdup(c->a, name);
			f->aer[k][n++].count = (unsigned long)x;
		}
		f->n_aer[k] = n;
	}
	return 0;
}

static int parse_func(struct pctx *c, struct board_root *root, struct board_func *parent,
		      struct json_object *in, const struct jpath *at, struct board_func **ret);

static int parse_children(struct pctx *c, struct board_root *root, struct board_func *parent,
			  struct json_object *obj, const struct jpath *at, size_t *ret_n,
			  struct board_func ***ret)
{
	struct json_object *list = NULL;
	struct jpath kp = JP_KEY(at, "devices");
	size_t n;
	int r;

	if (!json_object_object_get_ex(obj, "devices", &list) || !list)
		return 0;
	r = p_expect_list(c, list, &kp, "'devices'", false, NULL);
	if (r < 0)
		return r;
	n = json_object_array_length(list);
	*ret = arena_alloc(c->a, n * sizeof(**ret) + 1);
	if (!*ret)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct jpath ip = JP_INDEX(&kp, i);

		r = parse_func(c, root, parent, json_object_array_get_idx(list, i), &ip,
			       &(*ret)[i]);
		if (r < 0)
			return r;
	}
	*ret_n = n;
	return 0;
}

static int parse_func_body(struct pctx *c, struct board_root *root, struct board_func *parent,
			   struct json_object *obj, const struct jpath *at, struct board_func *f)
{
	const char *s = NULL;
	long long x;
	bool has_children = p_present(obj, "devices");
	int r;

	r = p_check_keys(c, obj, at, "pci function", func_keys);
	if (r < 0)
		return r;

	r = p_str(c, obj, "bdf", at, &s);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "pci function needs 'bdf' (its address, e.g. "
				  "\"0000:18:00.0\" or \"18:00.0\")");
	if (!parse_bdf(s, root->domain, &f->domain, &f->bus, &f->dev, &f->fn)) {
		struct jpath kp = JP_KEY(at, "bdf");

		return board_fail(c->d, &kp, "bad PCI address '%s' (want DDDD:BB:DD.F or "
				  "BB:DD.F, device < 20, function 0-7)", s);
	}
	if (f->domain != root->domain) {
		struct jpath kp = JP_KEY(at, "bdf");

		return board_fail(c->d, &kp, "'%s' is in domain %04x but its host bridge %s is "
				  "in %04x", s, f->domain, root->name, root->domain);
	}
	snprintf(f->bdf, sizeof(f->bdf), "%04x:%02x:%02x.%u", f->domain, f->bus, f->dev, f->fn);

	/* port kind: explicit, or from the position in the tree */
	r = p_str(c, obj, "type", at, &s);
	if (r < 0)
		return r;
	if (r > 0) {
		size_t i;

		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(kinds[i].name, s))
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0])) {
			struct jpath kp = JP_KEY(at, "type");

			return board_fail(c->d, &kp, "unknown type '%s' (endpoint, rciep, root-port, "
					  "switch-upstream, switch-downstream, pci-bridge)", s);
		}
		f->kind = kinds[i].kind;
	} else if (has_children) {
		f->kind = !parent ? BOARD_ROOT_PORT
			: parent->kind == BOARD_ROOT_PORT || parent->kind == BOARD_SWITCH_DOWN
				? BOARD_SWITCH_UP
			: parent->kind == BOARD_SWITCH_UP ? BOARD_SWITCH_DOWN
							  : BOARD_PCI_BRIDGE;
	} else {
		f->kind = parent ? BOARD_ENDPOINT : BOARD_RCIEP;
	}
	if (has_children && !board_kind_is_bridge(f->kind)) {
		struct jpath kp = JP_KEY(at, "devices");

		return board_fail(c->d, &kp, "%s is an endpoint; only bridges have 'devices'",
				  f->bdf);
	}

	r = p_id_pair(c, obj, "id", at, &f->vendor, &f->device);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "pci function %s needs 'id' (\"vendor:device\")",
				  f->bdf);
	if (board_kind_is_bridge(f->kind)) {
		f->sub_vendor = f->sub_device = 0;
	} else {
		f->sub_vendor = f->vendor;
		f->sub_device = f->device;
	}
	r = p_id_pair(c, obj, "subsystem", at, &f->sub_vendor, &f->sub_device);
	if (r < 0)
		return r;
	r = p_int(c, obj, "class", at, 0, 0xffffff, &x);
	if (r < 0)
		return r;
	if (r > 0)
		f->class_code = (uint32_t)x;
	else if (board_kind_is_bridge(f->kind))
		f->class_code = 0x060400;
	else
		return board_fail(c->d, at, "pci function %s needs 'class' (e.g. 0x030200)",
				  f->bdf);
	r = p_int(c, obj, "rev", at, 0, 0xff, &x);
	if (r < 0)
		return r;
	f->revision = r > 0 ? (uint8_t)x : 0;

	/* driver: default pcieport on PCIe ports; explicit null = unbound */
	if (f->kind == BOARD_ROOT_PORT || f->kind == BOARD_SWITCH_UP ||
	    f->kind == BOARD_SWITCH_DOWN)
		f->driver = "pcieport";
	if (json_object_object_get_ex(obj, "driver", NULL)) {
		f->driver = NULL;
		r = p_name(c, obj, "driver", at, &f->driver);
		if (r < 0)
			return r;
	}

	f->numa = root->numa;
	r = p_int(c, obj, "numa", at, -1, 1023, &x);
	if (r < 0)
		return r;
	if (r > 0)
		f->numa = (int)x;
	/* iommu_group: automatic; explicit null = in no group */
	f->iommu_group = json_object_object_get_ex(obj, "iommu_group", NULL) ? BOARD_NO_IOMMU_GROUP
									      : -1;
	r = p_int(c, obj, "iommu_group", at, 0, 65535, &x);
	if (r < 0)
		return r;
	if (r > 0)
		f->iommu_group = (int)x;
	f->irq = -1;
	r = p_int(c, obj, "irq", at, 0, 65535, &x);
	if (r < 0)
		return r;
	if (r > 0)
		f->irq = (int)x;

	r = p_link(c, obj, "link", at, &f->link);
	if (r < 0)
		return r;
	f->link_set = r > 0;
	r = p_link(c, obj, "max_link", at, &f->max_link);
	if (r < 0)
		return r;
	f->max_link_set = r > 0;

	if ((r = p_text(c, obj, "label", at, &f->label)) < 0)
		return r;
	f->acpi_index = -1;
	r = p_int(c, obj, "acpi_index", at, 0, 0x7fffffff, &x);
	if (r < 0)
		return r;
	if (r > 0)
		f->acpi_index = (int)x;
	if ((r = p_text(c, obj, "slot", at, &f->slot)) < 0)
		return r;
	if (f->slot && (!f->slot[0] || strchr(f->slot, '/') || f->slot[0] == '.')) {
		struct jpath kp = JP_KEY(at, "slot");

		return board_fail(c->d, &kp, "slot name '%s' is not usable as a file name",
				  f->slot);
	}
	if ((r = p_bool(c, obj, "boot_vga", at, &f->boot_vga)) < 0)
		return r;
	if ((r = p_bars(c, obj, "bars", at, f->bars)) < 0)
		return r;
	f->bars_set = r > 0;

	f->explicit_bus = -1;
	r = p_int(c, obj, "bus", at, 0, 255, &x);
	if (r < 0)
		return r;
	if (r > 0) {
		struct jpath kp = JP_KEY(at, "bus");

		if (!board_kind_is_bridge(f->kind))
			return board_fail(c->d, &kp, "'bus' (secondary bus) is for bridges only");
		if (has_children)
			return board_fail(c->d, &kp, "'bus' is for bridges without 'devices'; a "
					  "bridge's secondary bus is that of its devices");
		f->explicit_bus = (int)x;
	}

	if ((r = parse_files(c, f, obj, at)) < 0)
		return r;
	if ((r = parse_aer(c, f, obj, at)) < 0)
		return r;
	if ((r = p_sriov(c, f, obj, at)) < 0)
		return r;
	if ((r = p_function_devices(c, f, obj, at)) < 0)
		return r;
	return parse_children(c, root, f, obj, at, &f->n_children, &f->children);
}

static int parse_func(struct pctx *c, struct board_root *root, struct board_func *parent,
		      struct json_object *in, const struct jpath *at, struct board_func **ret)
{
	struct json_object *obj = NULL;
	struct board_func *f;
	int r = p_expect_object(c, in, at, "a pci function");

	if (r < 0)
		return r;
	r = apply_template(c, in, at, &obj);
	if (r < 0)
		return r;
	f = arena_alloc(c->a, sizeof(*f));
	if (!f) {
		json_object_put(obj);
		return -ENOMEM;
	}
	f->root = root;
	f->parent = parent;
	f->vf_index = -1;
	f->at = p_keep_path(c, at);
	r = parse_func_body(c, root, parent, obj, at, f);
	json_object_put(obj);
	if (r < 0)
		return r;
	*ret = f;
	return 0;
}

static int parse_root(struct pctx *c, struct board_root *root, struct json_object *obj,
		      const struct jpath *at)
{
	static const char *const keys[] = { "root", "numa", "devices", NULL };
	const char *s = NULL;
	long long x;
	int r = p_check_keys(c, obj, at, "host bridge", keys);

	if (r < 0)
		return r;
	root->at = p_keep_path(c, at);
	r = p_str(c, obj, "root", at, &s);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, at, "host bridge needs 'root' (\"DDDD:BB\", e.g. "
				  "\"0000:17\" for pci0000:17)");
	{
		const char *colon = strchr(s, ':');
		size_t dl = colon ? (size_t)(colon - s) : 0;

		if (!colon || (dl != 4 && dl != 5) || strlen(colon + 1) != 2 ||
		    !hex_field(s, dl, &root->domain) || !hex_field(colon + 1, 2, &root->bus)) {
			struct jpath kp = JP_KEY(at, "root");

			return board_fail(c->d, &kp, "bad host bridge '%s' (want \"DDDD:BB\")", s);
		}
	}
	snprintf(root->name, sizeof(root->name), "pci%04x:%02x", root->domain, root->bus);
	root->numa = -1;
	r = p_int(c, obj, "numa", at, -1, 1023, &x);
	if (r < 0)
		return r;
	if (r > 0)
		root->numa = (int)x;
	return parse_children(c, root, NULL, obj, at, &root->n_children, &root->children);
}

static int parse_numa(struct pctx *c, struct json_object *top, const struct jpath *at)
{
	static const char *const keys[] = { "node", "cpus", "distances", NULL };
	struct board *b = c->b;
	struct json_object *list = NULL;
	struct jpath kp = JP_KEY(at, "numa");
	int r;

	if (!json_object_object_get_ex(top, "numa", &list) || !list) {
		/* one node with 8 CPUs: enough for small test boards */
		b->n_numa = 1;
		b->numa = arena_alloc(c->a, sizeof(*b->numa));
		if (!b->numa)
			return -ENOMEM;
		b->numa[0].cpulist = "0-7";
		b->nr_cpus = 8;
		return 0;
	}
	r = p_expect_list(c, list, &kp, "'numa'", false, NULL);
	if (r < 0)
		return r;
	b->n_numa = json_object_array_length(list);
	if (!b->n_numa)
		return board_fail(c->d, &kp, "'numa' needs at least one node");
	b->numa = arena_alloc(c->a, b->n_numa * sizeof(*b->numa));
	if (!b->numa)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_numa; i++) {
		struct json_object *e = json_object_array_get_idx(list, i);
		struct jpath ip = JP_INDEX(&kp, i);
		struct board_numa *n = &b->numa[i];
		struct json_object *dist = NULL;
		long long x;
		unsigned max = 0;

		r = p_check_keys(c, e, &ip, "numa node", keys);
		if (r < 0)
			return r;
		r = p_int(c, e, "node", &ip, 0, 1023, &x);
		if (r < 0)
			return r;
		if (r == 0)
			return board_fail(c->d, &ip, "numa node needs 'node' (its number)");
		n->id = (int)x;
		if (n->id != (int)i)
			return board_fail(c->d, &ip, "numa nodes must be listed in order 0, 1, ...; "
					  "expected node %zu", i);
		r = p_cpulist(c, e, "cpus", &ip, &n->cpulist, &max);
		if (r < 0)
			return r;
		if (r == 0)
			return board_fail(c->d, &ip, "numa node needs 'cpus' (e.g. \"0-15,32-47\")");
		if (max + 1 > b->nr_cpus)
			b->nr_cpus = max + 1;
		if (json_object_object_get_ex(e, "distances", &dist) && dist) {
			struct jpath dp = JP_KEY(&ip, "distances");

			r = p_expect_list(c, dist, &dp, "'distances'", false, NULL);
			if (r < 0)
				return r;
			n->n_dist = json_object_array_length(dist);
			n->distances = arena_alloc(c->a, n->n_dist * sizeof(int) + 1);
			if (!n->distances)
				return -ENOMEM;
			for (size_t k = 0; k < n->n_dist; k++) {
				struct json_object *d = json_object_array_get_idx(dist, k);
				struct jpath ep = JP_INDEX(&dp, k);

				if (!json_object_is_type(d, json_type_int) ||
				    json_object_get_int(d) < 1 || json_object_get_int(d) > 255)
					return board_fail(c->d, &ep, "a NUMA distance is 1..255");
				n->distances[k] = json_object_get_int(d);
			}
		}
	}
	for (size_t i = 0; i < b->n_numa; i++)
		if (b->numa[i].n_dist && b->numa[i].n_dist != b->n_numa) {
			struct jpath ip = JP_INDEX(&kp, i);

			return board_fail(c->d, &ip, "'distances' needs one entry per node (%zu)",
					  b->n_numa);
		}
	return 0;
}

static int parse_route(struct pctx *c, struct json_object *top, const char *key,
		       const struct jpath *at, const char **dev, const char **via,
		       const struct jpath **ret_at)
{
	static const char *const keys[] = { "dev", "via", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, key);
	int r;

	if (!json_object_object_get_ex(top, key, &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, key, keys);
	if (r < 0)
		return r;
	*ret_at = p_keep_path(c, &kp);
	r = p_name(c, v, "dev", &kp, dev);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, &kp, "'%s' needs 'dev' (the interface)", key);
	r = p_str(c, v, "via", &kp, via);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(c->d, &kp, "'%s' needs 'via' (the gateway address)", key);
	{
		unsigned char addr[16];
		bool v6 = !strcmp(key, "default_route6");

		if (inet_pton(v6 ? AF_INET6 : AF_INET, *via, addr) != 1) {
			struct jpath vp = JP_KEY(&kp, "via");

			return board_fail(c->d, &vp, "'via' is not an IPv%d address: '%s'", v6 ? 6 : 4,
					  *via);
		}
	}
	return 0;
}

static int parse_mounts(struct pctx *c, struct json_object *top, const struct jpath *at)
{
	static const char *const keys[] = { "source", "target", "fstype", "options", NULL };
	struct board *b = c->b;
	struct json_object *list = NULL;
	struct jpath kp = JP_KEY(at, "mounts");
	int r;

	if (!json_object_object_get_ex(top, "mounts", &list) || !list)
		return 0;
	r = p_expect_list(c, list, &kp, "'mounts'", false, NULL);
	if (r < 0)
		return r;
	b->n_mounts = json_object_array_length(list);
	b->mounts = arena_alloc(c->a, b->n_mounts * sizeof(*b->mounts) + 1);
	if (!b->mounts)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_mounts; i++) {
		struct json_object *e = json_object_array_get_idx(list, i);
		struct jpath ip = JP_INDEX(&kp, i);
		struct board_mount *m = &b->mounts[i];

		r = p_check_keys(c, e, &ip, "mount", keys);
		if (r < 0)
			return r;
		m->at = p_keep_path(c, &ip);
		if ((r = p_name(c, e, "source", &ip, &m->source)) < 0)
			return r;
		if ((r = p_str(c, e, "target", &ip, &m->target)) < 0)
			return r;
		if (!m->source || !m->target || m->target[0] != '/')
			return board_fail(c->d, &ip, "a mount needs 'source' (a block device of the "
					  "board, e.g. nvme0n1p2) and an absolute 'target'");
		m->fstype = "ext4";
		m->options = "rw,relatime";
		if ((r = p_name(c, e, "fstype", &ip, &m->fstype)) < 0)
			return r;
		if ((r = p_str(c, e, "options", &ip, &m->options)) < 0)
			return r;
		if (strpbrk(m->target, " \t\n") || strpbrk(m->options, " \t\n"))
			return board_fail(c->d, &ip, "mount target and options cannot hold blanks");
	}
	return 0;
}

static int parse_rxe(struct pctx *c, struct json_object *top, const struct jpath *at)
{
	struct board *b = c->b;
	struct json_object *list = NULL;
	struct jpath kp = JP_KEY(at, "rxe");
	int r;

	if (!json_object_object_get_ex(top, "rxe", &list) || !list)
		return 0;
	r = p_expect_list(c, list, &kp, "'rxe'", false, NULL);
	if (r < 0)
		return r;
	b->n_rxe = json_object_array_length(list);
	b->rxe = arena_alloc(c->a, b->n_rxe * sizeof(*b->rxe) + 1);
	if (!b->rxe)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_rxe; i++) {
		struct jpath ip = JP_INDEX(&kp, i);

		r = p_ibdev(c, json_object_array_get_idx(list, i), &ip, &b->rxe[i].ib, true);
		if (r < 0)
			return r;
		b->rxe[i].netdev = b->rxe[i].ib.parent_netdev;
	}
	return 0;
}

static int parse_nvidia_versions(struct pctx *c, struct json_object *top,
				 const struct jpath *at)
{
	static const char *const keys[] = { "driver_version", "cuda_driver_version", NULL };
	struct json_object *v = NULL;
	struct jpath kp = JP_KEY(at, "nvidia");
	long long x;
	int r;

	c->b->nvidia_driver = "550.54.15";
	c->b->cuda_driver = 12040;
	if (!json_object_object_get_ex(top, "nvidia", &v) || !v)
		return 0;
	r = p_check_keys(c, v, &kp, "'nvidia'", keys);
	if (r < 0)
		return r;
	if ((r = p_text(c, v, "driver_version", &kp, &c->b->nvidia_driver)) < 0)
		return r;
	r = p_int(c, v, "cuda_driver_version", &kp, 1000, 999999, &x);
	if (r < 0)
		return r;
	if (r > 0)
		c->b->cuda_driver = (int)x;
	return 0;
}

int board_parse(struct board *b, struct json_object *top, const struct board_diag *d)
{
	struct pctx c = { .b = b, .a = b->arena, .d = d };
	const struct jpath *at = NULL;	/* the document itself */
	struct json_object *list = NULL;
	struct jpath kp = JP_KEY(at, "pci");
	int r;

	if (!top)
		return board_fail(d, NULL, "the board file is empty");
	r = p_check_keys(&c, top, at, "the board", top_keys);
	if (r < 0)
		return r;
	r = p_name(&c, top, "board", at, &b->name);
	if (r < 0)
		return r;
	if (r == 0)
		return board_fail(d, NULL, "the board needs a 'board' name (e.g. board: hgx-h100)");
	if ((r = p_text(&c, top, "description", at, &b->description)) < 0)
		return r;
	b->hostname = b->name;
	if ((r = p_name(&c, top, "hostname", at, &b->hostname)) < 0)
		return r;
	if ((r = p_str(&c, top, "boot_id", at, &b->boot_id)) < 0)
		return r;
	b->kernel = "6.1.0-28-amd64";
	if ((r = p_text(&c, top, "kernel", at, &b->kernel)) < 0)
		return r;
	b->iommu = true;
	if ((r = p_bool(&c, top, "iommu", at, &b->iommu)) < 0)
		return r;
	if ((r = parse_numa(&c, top, at)) < 0)
		return r;
	if ((r = parse_nvidia_versions(&c, top, at)) < 0)
		return r;

	if (json_object_object_get_ex(top, "templates", &c.templates) && c.templates) {
		struct jpath tp = JP_KEY(at, "templates");

		r = p_expect_object(&c, c.templates, &tp, "'templates'");
		if (r < 0)
			return r;
		json_object_object_foreach(c.templates, name, tmpl) {
			struct jpath np = JP_KEY(&tp, name);

			r = p_check_keys(&c, tmpl, &np, "template", func_keys);
			if (r < 0)
				return r;
			if (json_object_object_get_ex(tmpl, "bdf", NULL) ||
			    json_object_object_get_ex(tmpl, "use", NULL))
				return board_fail(d, &np, "a template cannot hold 'bdf' or 'use'");
		}
	}

	if (!json_object_object_get_ex(top, "pci", &list) || !list)
		return board_fail(d, NULL, "the board needs 'pci' (a list of host bridges)");
	r = p_expect_list(&c, list, &kp, "'pci'", false, NULL);
	if (r < 0)
		return r;
	b->n_roots = json_object_array_length(list);
	b->roots = arena_alloc(c.a, b->n_roots * sizeof(*b->roots) + 1);
	if (!b->roots)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_roots; i++) {
		struct jpath ip = JP_INDEX(&kp, i);

		r = parse_root(&c, &b->roots[i], json_object_array_get_idx(list, i), &ip);
		if (r < 0)
			return r;
	}
	if ((r = parse_mounts(&c, top, at)) < 0)
		return r;
	if ((r = parse_route(&c, top, "default_route", at, &b->default_dev, &b->default_via,
			     &b->default_at)) < 0)
		return r;
	if ((r = parse_route(&c, top, "default_route6", at, &b->default6_dev,
			     &b->default6_via, &b->default6_at)) < 0)
		return r;
	if ((r = parse_rxe(&c, top, at)) < 0)
		return r;
	return p_platform(&c, top, at);
}
