/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every command that looks at the node shares: the options naming the
 * node (--board or the three roots), the config file, the backend directory,
 * and turning them into roots, a config and a backend registry.
 */
#ifndef DRALET_SETUP_H
#define DRALET_SETUP_H

#include <getopt.h>
#include <stdbool.h>

#include "hal/hal.h"

struct board_node;
struct config;
struct node_ops;
struct registry;

enum {
	OPT_BOARD = 1000,
	OPT_SYSFS_ROOT,
	OPT_DEV_ROOT,
	OPT_PROC_ROOT,
	OPT_CONFIG,
	OPT_BACKEND_DIR,
	OPT_LOG_FORMAT,
	OPT_VERBOSITY,
	OPT_BOARD_TREE,
	OPT_FIRST_COMMAND_OPTION,	/* commands number their own options from here */
};

#define SETUP_LONG_OPTIONS                                                      \
	{ "board", required_argument, NULL, OPT_BOARD },                        \
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },              \
	{ "dev-root", required_argument, NULL, OPT_DEV_ROOT },                  \
	{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },                \
	{ "config", required_argument, NULL, OPT_CONFIG },                      \
	{ "backend-dir", required_argument, NULL, OPT_BACKEND_DIR },            \
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },              \
	{ "v", required_argument, NULL, OPT_VERBOSITY },                       \
	{ "board-tree", required_argument, NULL, OPT_BOARD_TREE }

#define SETUP_OPTIONS_HELP                                                                  \
	"  --board FILE          simulate the node of a board file (boards/*.yaml)\n"         \
	"  --board-tree DIR      with --board: keep its tree in DIR (made when DIR has\n"     \
	"                        none, used as it is otherwise), so a restart finds the\n"    \
	"                        node as the last run left it\n"                             \
	"  --sysfs-root DIR      sysfs root (default /sys)\n"                               \
	"  --dev-root DIR        device node root (default /dev)\n"                         \
	"  --proc-root DIR       procfs root (default /proc)\n"                             \
	"  --config FILE         agent configuration (YAML)\n"                              \
	"  --backend-dir DIR     load backend shared objects (*.so) from DIR\n"             \
	"  --log-format text|json  log line format (default text)\n"                       \
	"  --v N                 log verbosity (4 and up: debug)\n"

struct setup_options {
	const char *board;
	const char *board_tree;
	const char *sysfs_root, *dev_root, *proc_root;
	const char *config;
	const char *backend_dir;
	bool log_json;
	int verbosity;
};

struct setup {
	struct hal_roots roots;
	char *board_dir;	/* materialized board, removed by setup_teardown */
	bool keep_board_dir;	/* --board-tree: the caller's, kept */
	int board_lock_fd;	/* flock on board_dir/.owner while it is ours, else -1 */
	/* What changes the node: a simulated board's kernel model (the board
	 * simulator's, boards/sim/board_node_ops.h, over board_dir), so sysfs
	 * writes, VF settings and FPGA programming act as the kernel would; NULL
	 * on a real node (the real seam below roots). */
	struct board_node *board_node;
	const struct node_ops *node;
	struct config *cfg;
	struct registry *reg;
};

/* Handles one of SETUP_LONG_OPTIONS: 1 when it was one, 0 when not, -EINVAL
 * (after printing why) for a bad value. */
int setup_option(struct setup_options *o, int opt, const char *arg);

/* Validates the options, materializes a board, loads the config and the
 * registry. Prints a clear error and returns -errno on failure. */
int setup_init(const struct setup_options *o, struct setup *ret);
void setup_teardown(struct setup *s);

/* The node's name when --node-name is not given: $NODE_NAME (the downward
 * API), else the host name in lower case, written into @buf. NULL when
 * neither is known. */
const char *setup_default_node_name(char *buf, size_t size);

#endif
