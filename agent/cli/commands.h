/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subcommands of the dralet binary. Each lives in its own agent/cmd_*.c
 * (or module folder) and gets argv starting at the subcommand's name, so
 * getopt_long works as usual. Returns the process exit status.
 */
#ifndef DRALET_COMMANDS_H
#define DRALET_COMMANDS_H

int cmd_discover(int argc, char **argv);	/* agent/cli/cmd_discover.c */
int cmd_board(int argc, char **argv);		/* agent/cli/cmd_board.c */
int cmd_pci(int argc, char **argv);		/* agent/cli/cmd_pci.c */
int cmd_ctl(int argc, char **argv);		/* agent/cli/cmd_ctl.c */
int cmd_slices(int argc, char **argv);		/* agent/cli/cmd_slices.c */
int cmd_run(int argc, char **argv);		/* agent/cli/cmd_run.c */
int cmd_sriov(int argc, char **argv);		/* agent/cli/cmd_sriov.c */
int cmd_fpga(int argc, char **argv);		/* agent/cli/cmd_fpga.c */

#endif
