/* SPDX-License-Identifier: Apache-2.0 */
/* dralet: the command line. Every subcommand lives in its own file. */
#include <stdio.h>
#include <string.h>

#include "agent/cli/commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "run", cmd_run, "the agent daemon: publish devices, serve the kubelet, prepare claims" },
	{ "discover", cmd_discover, "list the node's accelerators in the uniform device model" },
	{ "board", cmd_board, "simulated boards: materialize a board file into a sysfs/dev/proc tree" },
	{ "pci", cmd_pci, "every PCI function, its topology, and what discovery did with it" },
	{ "ctl", cmd_ctl, "call a running driver's kubelet sockets (info, health, prepare, unprepare, bench)" },
	{ "slices", cmd_slices, "the ResourceSlices this node publishes (and --publish them)" },
	{ "sriov", cmd_sriov, "SR-IOV PFs against the VF policies: status, apply" },
	{ "fpga", cmd_fpga, "the node's FPGA bitstream store: list images, add one" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: dralet <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "  %-10s %s\n", "version", "print the version");
	fprintf(out, "\n'dralet <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("dralet %s\n", DRALET_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "dralet: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
