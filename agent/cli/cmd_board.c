/* SPDX-License-Identifier: Apache-2.0 */
/* dralet board: simulated boards from the command line. */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boards/sim/board.h"
#include "boards/sim/board_model.h"
#include "agent/cli/commands.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dralet board materialize [--quiet] <board.yaml> <dir>\n"
		"       dralet board check <board.yaml>...\n"
		"       dralet board list [<boards dir>]\n"
		"\n"
		"Simulated boards describe one server model (PCIe tree, NUMA, GPUs, NICs, VFs,\n"
		"FPGAs ...) in YAML; the format is in docs/boards.md.\n"
		"\n"
		"  materialize  write <dir>/sys, <dir>/dev and <dir>/proc (and <dir>/nvml.json\n"
		"               for boards with NVML data) like a real node's; <dir> must be\n"
		"               new or empty. Point dralet at it with --sysfs-root <dir>/sys\n"
		"               --dev-root <dir>/dev --proc-root <dir>/proc, lspci with\n"
		"               -A linux-sysfs -O sysfs.path=<dir>/sys/bus/pci, or libudev\n"
		"               programs with umockdev (UMOCKDEV_DIR=<dir>).\n"
		"  check        validate board files and print what they hold\n"
		"  list         the boards in a directory (default: boards, or $DRALET_BOARDS)\n");
}

struct counts {
	size_t funcs, bridges, vfs, gpus, net, ib, drm, nvme, fpga;
};

static struct counts count(const struct board *b)
{
	struct counts c = { .funcs = b->n_funcs, .gpus = b->n_gpus, .ib = b->n_rxe };

	for (size_t i = 0; i < b->n_funcs; i++) {
		const struct board_func *f = b->funcs[i];

		c.bridges += board_kind_is_bridge(f->kind);
		c.vfs += f->physfn != NULL;
		c.net += f->n_net;
		c.ib += f->n_ib;
		c.drm += f->drm.card >= 0;
		c.nvme += f->nvme != NULL;
		c.fpga += f->n_fpga_region + (f->dfl != NULL);
	}
	return c;
}

static void print_summary(FILE *out, const char *path, const struct board *b)
{
	struct counts c = count(b);

	fprintf(out, "%s: board %s: %zu PCI functions (%zu bridges, %zu VFs) on %zu host bridges, "
		"%zu NUMA nodes, %u CPUs; %zu NVIDIA GPUs, %zu DRM cards, %zu netdevs, %zu RDMA "
		"devices, %zu NVMe, %zu FPGA regions\n", path, b->name, c.funcs, c.bridges, c.vfs,
		b->n_roots, b->n_numa, b->nr_cpus, c.gpus, c.drm, c.net, c.ib, c.nvme, c.fpga);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int materialize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool quiet = false;
	struct board b;
	char err[1024];
	double t0, t1, t2;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		if (c == 'q') {
			quiet = true;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	memset(&b, 0, sizeof(b));
	t0 = seconds();
	r = board_load(argv[optind], &b, err, sizeof(err));
	t1 = seconds();
	if (r == 0)
		r = board_write(&b, argv[optind + 1], err, sizeof(err));
	t2 = seconds();
	if (r < 0) {
		fprintf(stderr, "dralet board: %s\n", err);
		board_free(&b);
		return 1;
	}
	if (!quiet)
		printf("materialized %s (%zu PCI functions) into %s in %.1f ms (parse %.1f ms, "
		       "write %.1f ms)\n", b.name, b.n_funcs, argv[optind + 1], (t2 - t0) * 1e3,
		       (t1 - t0) * 1e3, (t2 - t1) * 1e3);
	board_free(&b);
	return 0;
}

static int check(int argc, char **argv)
{
	int status = 0;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct board b;
		char err[1024];

		memset(&b, 0, sizeof(b));
		if (board_load(argv[i], &b, err, sizeof(err)) < 0) {
			fprintf(stderr, "dralet board: %s\n", err);
			status = 1;
		} else {
			print_summary(stdout, argv[i], &b);
		}
		board_free(&b);
	}
	return status;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("DRALET_BOARDS") ? getenv("DRALET_BOARDS")
									 : "boards";
	DIR *dp = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int status = 0;

	if (!dp) {
		fprintf(stderr, "dralet board: cannot list %s: %m\n", dir);
		return 1;
	}
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);
		char **grown;

		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown)
			break;
		names = grown;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(dp);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct board b;
		char path[4096], err[1024];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		memset(&b, 0, sizeof(b));
		if (board_load(path, &b, err, sizeof(err)) < 0) {
			fprintf(stderr, "dralet board: %s\n", err);
			status = 1;
		} else {
			printf("%-20s %5zu functions  %s\n", names[i], b.n_funcs,
			       b.description ? b.description : "");
		}
		board_free(&b);
		free(names[i]);
	}
	free(names);
	return status;
}

int cmd_board(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "materialize"))
		return materialize(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return list(argc - 1, argv + 1);
	fprintf(stderr, "dralet board: unknown subcommand '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
