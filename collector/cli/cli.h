/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the entry points of `heapscope`'s subcommands, which
 * cli/main.c dispatches to.  argv[0] is the subcommand (record: the
 * program, argv[1] "record").  Each returns the process exit status.
 * Main thread only.
 */
#ifndef HS_CLI_H
#define HS_CLI_H

/* --------------------------------------------------- "record/record.c" */

/* `heapscope record ...`; no command, -h/--help and an unknown command
 * are answered here too (usage or an error on stderr).  Installs the
 * SIGINT/SIGTERM handlers.  0, 1 (recording failed), 2 (bad command
 * line). */
int hs_record_main(int argc, char **argv);

/* --------------------------------------------------- "daemon/daemon.c" */

/* `heapscope daemon ...`: 0, 1 (failed), 2 (bad command line). */
int hs_daemon_main(int argc, char **argv);

/* -------------------------------------------------------- "cli/rate.c" */

/* `heapscope rate ...`: 0, 1 (failed, or not applied within --wait),
 * 2 (bad command line). */
int hs_rate_main(int argc, char **argv);

#endif /* HS_CLI_H */
