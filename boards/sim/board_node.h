/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Private to the kernel model (board_node_ops.h): its state, and the tree
 * changes of board_node_tree.c that its rules (board_node_ops.c) ask for.
 * The tree changes write through the board simulator's writers
 * (board_write.h), so a VF made at run time is the VF a board with that
 * count materializes.
 */
#ifndef DRALET_BOARDS_BOARD_NODE_H
#define DRALET_BOARDS_BOARD_NODE_H

#include <limits.h>
#include <pthread.h>

#include <dralet/pci.h>

#include "boards/sim/board_model.h"
#include "boards/sim/board_node_ops.h"

#define BN_MAX_MODULES 64

/* One SR-IOV PF. */
struct bn_pf {
	struct board_func *pf;
	unsigned num;				/* VFs enabled now: vfs[0, num) */
	struct board_func **vfs;		/* [total_vfs], arena */
	struct dralet_vf_settings *settings;	/* [total_vfs], arena */
};

struct board_node {
	pthread_mutex_t lock;	/* held by every op of the table (board_node_ops) */
	struct board b;
	char dir[PATH_MAX];
	char sys[PATH_MAX + 8], dev[PATH_MAX + 8], proc[PATH_MAX + 8];
	int sysfd, devfd;	/* O_PATH descriptors of sys/ and dev/ */
	struct hal_roots roots;
	struct node_ops real;	/* the tree as it is */
	struct node_ops ops;	/* the model */
	struct bn_pf *pfs;	/* arena */
	size_t n_pfs;
	const char *modules[BN_MAX_MODULES];
	bool loaded[BN_MAX_MODULES];
	size_t n_modules;
	struct board_node_hooks hooks;
	unsigned fpga_programs;		/* images fpga_pr loaded */
	size_t fpga_last_size;
};

/* The function @address as present now, or NULL. */
struct board_func *bn_find(struct board_node *bn, const char *address);
/* The driver a function binds to without an override: the board's, or for
 * a VF its PF's `vf_driver`; NULL when none. */
const char *bn_own_driver(const struct board_func *f);

/* board_node_tree.c; each returns 0 or -errno. */
/* VFs 0..@n-1 of @p appear (bound to vf_driver when @autoprobe and loaded). */
int bn_add_vfs(struct board_node *bn, struct bn_pf *p, unsigned n, bool autoprobe);
/* All VFs of @p go. */
int bn_remove_vfs(struct board_node *bn, struct bn_pf *p);
/* @f (unbound) binds to @driver; unbinding takes its class devices away. */
int bn_bind(struct board_node *bn, struct board_func *f, const char *driver);
int bn_unbind(struct board_node *bn, struct board_func *f);

/* board_node_amdgpu.c: amdgpu's current_compute_partition store of @f. */
int bn_compute_partition(struct board_node *bn, struct board_func *f, const char *value);

/* board_node_fpga_mgr.c: node_ops' fpga_mgr_load and fpga_overlay. */
int bn_fpga_mgr_load(struct board_node *bn, const char *manager, unsigned long flags,
		     const char *image);
int bn_fpga_overlay(struct board_node *bn, const char *name, const char *dtbo);

#endif
