/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet fpga: the node's bitstream store (docs/fpga.md section 2).
 *   bitstreams  lists every image: name(s), sha256, kind, interface, accelerator
 *   add         copies an image into the store under its sha256 and names it
 * The store is --dir, else backends.dfl.options.bitstreamDir of --config,
 * else /var/lib/dralet/bitstreams.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "agent/cli/commands.h"
#include "agent/core/config.h"
#include "agent/lib/atomic_file.h"
#include "backends/fpga/bitstream.h"

enum { OPT_DIR = 1, OPT_CONFIG, OPT_OUTPUT, OPT_HELP };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dralet fpga bitstreams [--dir DIR | --config FILE] [-o text|json]\n"
		"       dralet fpga add NAME FILE [--dir DIR | --config FILE]\n\n"
		"bitstreams  every image of the node's bitstream store: its names, sha256, kind\n"
		"            (gbs, xclbin, raw), the interface it targets, its accelerator ID\n"
		"add         copies FILE into the store (named by its sha256) and names it NAME\n\n"
		"The store is DIR, else the configuration's backends.dfl.options.bitstreamDir,\n"
		"else " FPGA_STORE_DEFAULT_DIR ". See docs/fpga.md.\n");
}

/* The store directory from the configuration file (a copy), or NULL. */
static char *dir_from_config(const char *path)
{
	struct config *cfg = NULL;
	const struct config_backend *b;
	struct json_object *v;
	char err[512], *dir = NULL;

	if (config_load(path, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "dralet fpga: %s\n", err);
		return NULL;
	}
	b = config_backend(cfg, "dfl");
	if (b && b->options && json_object_object_get_ex(b->options, "bitstreamDir", &v))
		dir = strdup(json_object_get_string(v));
	else
		dir = strdup(FPGA_STORE_DEFAULT_DIR);
	config_free(cfg);
	return dir;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sha256-named files of @dir, sorted (malloc'd array of malloc'd names). */
static int list_images(const char *dir, char ***ret, size_t *ret_n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char **grown;

		if (!fpga_sha256_valid(e->d_name))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(e->d_name))) {
			free(grown ? grown : names);
			closedir(d);
			return -ENOMEM;
		}
		names = grown;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_string);
	*ret = names;
	*ret_n = n;
	return 0;
}

/* The names of @sha256 in @idx, comma-separated ("-" when none). */
static void names_of(const struct fpga_index *idx, const char *sha256, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < idx->n && o + 1 < size; i++)
		if (!strcmp(idx->entries[i].sha256, sha256)) {
			int n = snprintf(buf + o, size - o, "%s%s", o ? "," : "", idx->entries[i].name);
			o = n < 0 || (size_t)n >= size - o ? size - 1 : o + (size_t)n;
		}
	if (!buf[0])
		snprintf(buf, size, "-");
}

static int bitstreams(const char *dir, bool json)
{
	struct fpga_index idx;
	struct json_object *list = json ? json_object_new_array() : NULL;
	char err[512], **files = NULL;
	size_t n = 0;
	int r = fpga_store_index(dir, &idx, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "dralet fpga: %s\n", err);
		json_object_put(list);
		return 1;
	}
	r = list_images(dir, &files, &n);
	if (r < 0) {
		fprintf(stderr, "dralet fpga: bitstream store %s: %s\n", dir, strerror(-r));
		fpga_index_free(&idx);
		json_object_put(list);
		return 1;
	}
	if (!json)
		printf("%-20s %-16s %-7s %-32s %-32s %s\n", "NAME", "SHA256", "KIND", "INTERFACE",
		       "ACCELERATOR", "PLATFORM");
	for (size_t i = 0; i < n; i++) {
		struct fpga_image img;
		char names[512];
		int pr = fpga_store_describe(dir, files[i], &img, err, sizeof(err));

		names_of(&idx, files[i], names, sizeof(names));
		if (json) {
			struct json_object *o = json_object_new_object();
			json_object_object_add(o, "names", json_object_new_string(names));
			json_object_object_add(o, "sha256", json_object_new_string(files[i]));
			json_object_object_add(o, "kind",
					       json_object_new_string(fpga_image_kind_name(img.kind)));
			json_object_object_add(o, "interfaceID", json_object_new_string(img.interface_id));
			json_object_object_add(o, "acceleratorID",
					       json_object_new_string(img.accelerator_id));
			json_object_object_add(o, "platform", json_object_new_string(img.platform));
			json_object_object_add(o, "size", json_object_new_int64((int64_t)img.payload_size));
			if (pr < 0)
				json_object_object_add(o, "error", json_object_new_string(err));
			json_object_array_add(list, o);
		} else {
			printf("%-20s %.12s…    %-7s %-32s %-32s %s%s%s\n", names, files[i],
			       fpga_image_kind_name(img.kind), img.interface_id[0] ? img.interface_id : "-",
			       img.accelerator_id[0] ? img.accelerator_id : "-",
			       img.platform[0] ? img.platform : "-", pr < 0 ? "  # " : "",
			       pr < 0 ? err : "");
		}
		free(files[i]);
	}
	/* names whose image is missing */
	for (size_t i = 0; i < idx.n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, idx.entries[i].sha256);
		if (access(path, F_OK) == 0)
			continue;
		if (json) {
			struct json_object *o = json_object_new_object();
			json_object_object_add(o, "names", json_object_new_string(idx.entries[i].name));
			json_object_object_add(o, "sha256", json_object_new_string(idx.entries[i].sha256));
			json_object_object_add(o, "error", json_object_new_string("missing from the store"));
			json_object_array_add(list, o);
		} else {
			printf("%-20s %.12s…    %-7s # missing from the store\n", idx.entries[i].name,
			       idx.entries[i].sha256, "-");
		}
	}
	if (json)
		printf("%s\n", json_object_to_json_string_ext(list, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(list);
	free(files);
	fpga_index_free(&idx);
	return 0;
}

static int add(const char *dir, const char *name, const char *file)
{
	struct fpga_index idx;
	struct fpga_image img;
	struct json_object *o;
	char err[512], sha[FPGA_SHA256_HEX], *data;
	size_t len;
	int r;

	if (!fpga_store_name_valid(name)) {
		fprintf(stderr, "dralet fpga: \"%s\" is not a valid name (1-63 of A-Z a-z 0-9 . _ -)\n",
			name);
		return 2;
	}
	r = atomic_file_read(file, (size_t)1 << 31, &data, &len);
	if (r < 0) {
		fprintf(stderr, "dralet fpga: %s: %s\n", file, strerror(-r));
		return 1;
	}
	if (fpga_image_parse((const uint8_t *)data, len, &img, err, sizeof(err)) < 0)
		fprintf(stderr, "dralet fpga: warning: %s: %s (a raw image needs a manifest "
			"<sha256>.json beside it)\n", file, err);
	r = fpga_sha256_hex(data, len, sha);
	if (r == 0 && (r = atomic_file_mkdirs(dir, 0755)) == 0)
		r = atomic_file_write(dir, sha, data, len, 0644);
	free(data);
	if (r < 0) {
		fprintf(stderr, "dralet fpga: writing %s/%s: %s\n", dir, sha, strerror(-r));
		return 1;
	}
	if (fpga_store_index(dir, &idx, err, sizeof(err)) < 0) {
		fprintf(stderr, "dralet fpga: %s\n", err);
		return 1;
	}
	o = json_object_new_object();
	for (size_t i = 0; i < idx.n; i++)
		if (strcmp(idx.entries[i].name, name))
			json_object_object_add(o, idx.entries[i].name,
					       json_object_new_string(idx.entries[i].sha256));
	json_object_object_add(o, name, json_object_new_string(sha));
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	r = atomic_file_write(dir, "index.json", text, strlen(text), 0644);
	json_object_put(o);
	fpga_index_free(&idx);
	if (r < 0) {
		fprintf(stderr, "dralet fpga: writing %s/index.json: %s\n", dir, strerror(-r));
		return 1;
	}
	printf("%s %s\n", name, sha);
	return 0;
}

int cmd_fpga(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *config = NULL;
	char *owned = NULL;
	bool json = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DIR:
			dir = optarg;
			break;
		case OPT_CONFIG:
			config = optarg;
			break;
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr, "dralet fpga: -o takes text or json\n");
				return 2;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!dir && config && !(dir = owned = dir_from_config(config)))
		return 1;
	if (!dir)
		dir = FPGA_STORE_DEFAULT_DIR;
	if (!strcmp(argv[optind], "bitstreams") && optind + 1 == argc)
		r = bitstreams(dir, json);
	else if (!strcmp(argv[optind], "add") && optind + 3 == argc)
		r = add(dir, argv[optind + 1], argv[optind + 2]);
	else {
		usage(stderr);
		r = 2;
	}
	free(owned);
	return r;
}
