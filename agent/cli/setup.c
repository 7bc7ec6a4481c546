/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/cli/setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boards/sim/board.h"
#include "boards/sim/board_node_ops.h"
#include "agent/core/config.h"
#include "agent/lib/log.h"
#include "agent/core/registry.h"

int setup_option(struct setup_options *o, int opt, const char *arg)
{
	switch (opt) {
	case OPT_BOARD: o->board = arg; return 1;
	case OPT_BOARD_TREE: o->board_tree = arg; return 1;
	case OPT_SYSFS_ROOT: o->sysfs_root = arg; return 1;
	case OPT_DEV_ROOT: o->dev_root = arg; return 1;
	case OPT_PROC_ROOT: o->proc_root = arg; return 1;
	case OPT_CONFIG: o->config = arg; return 1;
	case OPT_BACKEND_DIR: o->backend_dir = arg; return 1;
	case OPT_LOG_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "json")) {
			fprintf(stderr, "dralet: --log-format must be text or json\n");
			return -EINVAL;
		}
		o->log_json = !strcmp(arg, "json");
		return 1;
	case OPT_VERBOSITY: {
		char *end;
		long v = strtol(arg, &end, 10);
		if (*end || v < 0 || v > 10) {
			fprintf(stderr, "dralet: --v must be a number from 0 to 10\n");
			return -EINVAL;
		}
		o->verbosity = (int)v;
		return 1;
	}
	}
	return 0;
}

static void on_registry_error(void *userdata, const char *message)
{
	(void)userdata;
	log_error("%s", message);
}

/* A root must be a directory we can open; say which one is not. */
static int check_root(const char *flag, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "dralet: %s %s: %s\n", flag, path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dralet: %s %s: not a directory\n", flag, path);
		return -ENOTDIR;
	}
	return 0;
}

/* The board's tree: in @tree (--board-tree; made when it has no sys/),
 * else in a new temporary directory. */
static int board_tree(const char *board, const char *tree, struct setup *s, char *err,
		      size_t errlen)
{
	char sys[4200];
	int r = 0;

	if (!tree) {
		int swept = 0;

		r = board_materialize_owned(board, &s->board_dir, &s->board_lock_fd, &swept, err,
					    errlen);
		if (r >= 0 && swept)
			log_info("removed %d board tree(s) left by agents that died beside %s", swept,
				 s->board_dir);
		return r;
	}
	snprintf(sys, sizeof(sys), "%s/sys", tree);
	if (access(sys, F_OK) < 0 && (r = board_materialize(board, tree, err, errlen)) < 0)
		return r;
	s->keep_board_dir = true;
	return (s->board_dir = strdup(tree)) ? 0 : -ENOMEM;
}

/* The roots of a simulated board: its tree (board_tree). The board's NVML
 * answers (nvml.json) go to the board NVML simulator through FAKE_NVML_DATA, and the board XRT simulator (an Alveo's
 * xclbin loads, tests/lib/fake-xrt) finds the board's sysfs tree through
 * FAKE_XRT_SYSFS, unless the caller set them already. */
static int simulate_board(const char *board, const char *tree, struct setup *s)
{
	char err[1024], *sys = NULL, *dev = NULL, *proc = NULL, *nvml = NULL;
	int r = board_tree(board, tree, s, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "dralet: %s\n", err);
		return r;
	}
	if (asprintf(&sys, "%s/sys", s->board_dir) < 0 || asprintf(&dev, "%s/dev", s->board_dir) < 0 ||
	    asprintf(&proc, "%s/proc", s->board_dir) < 0 ||
	    asprintf(&nvml, "%s/nvml.json", s->board_dir) < 0) {
		free(sys);
		free(dev);
		free(proc);
		free(nvml);
		return -ENOMEM;
	}
	s->roots = (struct hal_roots){ sys, dev, proc };
	if (access(nvml, R_OK) == 0 && setenv("FAKE_NVML_DATA", nvml, 0) < 0)
		r = -errno;
	if (r >= 0 && setenv("FAKE_XRT_SYSFS", sys, 0) < 0)
		r = -errno;
	free(nvml);
	if (r >= 0 && (r = board_node_open(board, s->board_dir, &s->board_node, err,
					   sizeof(err))) < 0)
		fprintf(stderr, "dralet: %s\n", err);
	if (r >= 0)
		s->node = board_node_ops(s->board_node);
	return r;
}

static int real_roots(const struct setup_options *o, struct setup *s)
{
	s->roots.sys = strdup(o->sysfs_root ? o->sysfs_root : "/sys");
	s->roots.dev = strdup(o->dev_root ? o->dev_root : "/dev");
	s->roots.proc = strdup(o->proc_root ? o->proc_root : "/proc");
	return s->roots.sys && s->roots.dev && s->roots.proc ? 0 : -ENOMEM;
}

int setup_init(const struct setup_options *o, struct setup *s)
{
	char err[1024];
	const char *board;
	int r;

	memset(s, 0, sizeof(*s));
	s->board_lock_fd = -1;
	log_setup(o->verbosity, o->log_json);
	if (o->board && (o->sysfs_root || o->dev_root || o->proc_root)) {
		fprintf(stderr, "dralet: --board and --sysfs-root/--dev-root/--proc-root exclude "
				"each other\n");
		return -EINVAL;
	}
	r = config_load(o->config, &s->cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "dralet: config %s\n", err);
		return r;
	}
	/* --board wins over the configuration's simulatedBoard; explicit roots
	 * mean the caller chose the node itself. */
	board = o->board;
	if (!board && !o->sysfs_root && !o->dev_root && !o->proc_root)
		board = s->cfg->simulated_board;
	if (o->board_tree && !board) {
		fprintf(stderr, "dralet: --board-tree needs --board\n");
		r = -EINVAL;
	} else
		r = board ? simulate_board(board, o->board_tree, s) : real_roots(o, s);
	if (r >= 0)
		r = check_root("--sysfs-root", s->roots.sys);
	if (r >= 0)
		r = check_root("--dev-root", s->roots.dev);
	if (r >= 0)
		r = check_root("--proc-root", s->roots.proc);
	if (r >= 0)
		r = registry_new(o->backend_dir, on_registry_error, NULL, &s->reg);
	for (size_t i = 0; r >= 0 && i < s->cfg->n_backends; i++) {
		const struct config_backend *cb = &s->cfg->backends[i];
		const struct dralet_backend *b = registry_find(s->reg, cb->name);

		if (!b) {
			fprintf(stderr, "dralet: config %s: backends.%s: no such backend\n", o->config,
				cb->name);
			r = -EINVAL;
		} else if ((r = config_check_options(cb, b->options, err, sizeof(err))) < 0) {
			fprintf(stderr, "dralet: config %s: %s\n", o->config, err);
		}
	}
	if (r < 0)
		setup_teardown(s);
	return r < 0 ? r : 0;
}

void setup_teardown(struct setup *s)
{
	registry_free(s->reg);
	config_free(s->cfg);
	board_node_free(s->board_node);
	if (s->board_dir) {
		if (!s->keep_board_dir)
			board_remove_tree(s->board_dir);
		free(s->board_dir);
	}
	if (s->board_lock_fd >= 0)
		close(s->board_lock_fd);
	free((char *)s->roots.sys);
	free((char *)s->roots.dev);
	free((char *)s->roots.proc);
	memset(s, 0, sizeof(*s));
	s->board_lock_fd = -1;
}

const char *setup_default_node_name(char *buf, size_t size)
{
	const char *env = getenv("NODE_NAME");

	if (env && *env)
		return env;
	if (gethostname(buf, size) < 0)
		return NULL;
	buf[size - 1] = '\0';
	for (char *p = buf; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return buf;
}
