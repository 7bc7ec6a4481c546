/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test nodes from board snippets: a small board in YAML (docs/boards.md,
 * "The format") materialized by the board simulator (boards/sim), the one
 * way the tests build a node. Tests change the tree afterwards only to play
 * the kernel (a driver rebinding, a function going away).
 */
#ifndef DRALET_TEST_BOARD_SNIPPET_H
#define DRALET_TEST_BOARD_SNIPPET_H

/* The board @yaml materialized into a new temporary directory (sys/, dev/,
 * proc/ below it); malloc'd, removed and freed with tree_remove(). Fails the
 * test, printing the simulator's message, when the board is invalid. */
char *board_tree(const char *yaml);

#endif
