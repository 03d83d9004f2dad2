// SPDX-License-Identifier: MIT
/*
 * main.c - `heapscope COMMAND ...`: hands the command line to its
 * subcommand: daemon (daemon.c), rate (rate.c), and record (record.c),
 * which also answers no command, -h/--help and an unknown command.
 */
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	/* Other subcommands have their own parsers and loops. */
	if (argc >= 2 && !strcmp(argv[1], "daemon"))
		return hs_daemon_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "rate"))
		return hs_rate_main(argc - 1, argv + 1);
	return hs_record_main(argc, argv);
}
