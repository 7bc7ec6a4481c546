/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A test node whose kernel is the board simulator's model
 * (boards/sim/board_node_ops.h): a board snippet materialized, the model
 * over it, every write and VF setting it is asked for logged, and faults
 * the PF drivers can answer with.
 */
#ifndef DRALET_TEST_NODE_MODEL_H
#define DRALET_TEST_NODE_MODEL_H

#include <stddef.h>

#include "boards/sim/board_node_ops.h"

#define NODE_MODEL_LOG 256
#define NODE_MODEL_FAULTS 4

/* What the driver of PF @pf answers (board_node_hooks). */
struct node_model_fault {
	const char *pf;
	unsigned enospc_above;	/* enabling more VFs: -ENOSPC; 0: no limit */
	int disable_error;	/* disabling its VFs answers this (-EBUSY: in use) */
	int enable_error;	/* enabling VFs answers this (-EINVAL: refused) */
};

struct node_model {
	char *dir;			/* the tree: sys/, dev/, proc/ */
	struct board_node *bn;
	struct node_ops node;		/* the model, logging */
	struct node_ops real;		/* the tree as it is: no rules, no log */
	struct hal_roots roots;
	struct node_model_fault faults[NODE_MODEL_FAULTS];
	int vf_get_error, vf_set_error;	/* every VF settings read / change answers this */
	int fpga_pr_error;		/* every FPGA programming answers this (-EIO, -EBUSY) */
	/* "<address>/<file>=<value>" (bus/pci/devices/ left out, others the
	 * relative path), "vf_set if<ifindex> vf<n> <what>" and
	 * "fpga_pr <fme> port <id> (<port node>) <size> bytes" */
	char log[NODE_MODEL_LOG][192];
	size_t n_log;
};

/* The board @yaml with the model over it; fails the test when invalid. */
void node_model_init(struct node_model *m, const char *yaml);
void node_model_fini(struct node_model *m);	/* removes the tree */

/* The index of the first log line containing @needle at or after @from, or -1. */
int node_model_find_log(const struct node_model *m, size_t from, const char *needle);
/* The settings PF @pf keeps for VF @vf (board_node_vf_settings); fails the
 * test when there are none. */
struct dralet_vf_settings *node_model_vf(struct node_model *m, const char *pf, unsigned vf);
/* Whether function @address exists in the tree now. */
bool node_model_has(const struct node_model *m, const char *address);

#endif
