/* SPDX-License-Identifier: MIT */
/*
 * cli.h - collector/cli/: the command line.  The conventions every
 * subcommand (record, daemon, rate, rss, leaks, symbolize) shares (cli.c): an option table that
 * drives getopt_long and names what each argument accepts, and one-line
 * errors
 *
 *   heapscope CMD: WHAT IS WRONG (WHAT IS ACCEPTED)
 *   try 'heapscope CMD --help'
 *
 * with exit status HS_EXIT_USAGE for a bad command line; and the entry
 * point of each subcommand, which main.c dispatches to (argv[0] is the
 * subcommand but for record; each returns the process exit status).
 * Main thread, before any other starts (getopt's state is global).
 */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <getopt.h> /* optarg, optind: hs_cli__next is getopt_long */
#include <stdbool.h>
#include <sys/types.h>

#define HS_EXIT_USAGE 2 /* a bad command line */
#define HS_EXIT_FAIL 1	/* the command could not do its job */

/* One option: --name (NULL ends a table), key (a letter for -X too, or
 * >= 256 for a long-only option), and for an option with an argument
 * what the argument accepts, said in errors ("a pid, 1..4194304");
 * arg NULL: no argument. */
/* ---------------------------------------------------------- "cli.c" */

struct hs_cli_opt {
	const char *name;
	int key;
	const char *arg;
};

/*
 * The next option of argv (getopt_long over opts): its key, with the
 * argument in optarg; -1 when the options end (optind: the first operand);
 * '?' after printing the one-line error of an unknown option or a missing
 * argument.  Set optind before the first call.
 */
int hs_cli__next(const char *cmd, int argc, char **argv,
		 const struct hs_cli_opt *opts);

/* What opts says key accepts ("" if nothing). */
const char *hs_cli__accepts(const struct hs_cli_opt *opts, int key);

/*
 * Print "heapscope CMD: MESSAGE" and the --help hint on stderr (cmd NULL:
 * "heapscope: MESSAGE", "try 'heapscope --help'").  Returns -EINVAL.
 */
int hs_cli__usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "heapscope CMD: invalid OPTION 'VALUE' (ACCEPTS)" and the hint; VALUE
 * is quoted safely (control characters as '?', cut at 64 bytes).
 * Returns -EINVAL. */
int hs_cli__bad_value(const char *cmd, const char *option, const char *value,
		      const char *accepts);

/* A decimal integer (no sign, no suffix, no spaces) in [min, max]: 0 or
 * -EINVAL (-ERANGE when a number out of range). */
int hs_cli__parse_long(const char *s, long min, long max, long *out);

/* The largest pid: /proc/sys/kernel/pid_max - 1 (4194303 if unreadable). */
long hs_cli__pid_max(void);

/* What a pid option accepts, "a process id, 1..PID_MAX" (static buffer). */
const char *hs_cli__pid_accepts(void);

/* Parse a pid (1..pid_max); on error prints the one-line error for
 * option and returns -EINVAL. */
int hs_cli__parse_pid(const char *cmd, const char *option, const char *s,
		      pid_t *out);

/* Parse --lib's value: non-empty; a path (with '/') readable from here
 * must be an ELF object with heapscope's (or a compatible provider's)
 * probe notes, else the one-line error "is not libheapscope"; a file-name
 * prefix or a path only the target sees is checked when it is opened.
 * *out = s, or the one-line error and -EINVAL. */
int hs_cli__parse_lib(const char *cmd, const struct hs_cli_opt *opts, int key,
		      const char *s, const char **out);

/* Parse --symbolize's value, "local" (*raw = false) or "none" (*raw =
 * true: addresses and build ids only, for heapscope symbolize); else the
 * one-line error naming what opts' entry key accepts and -EINVAL. */
int hs_cli__parse_symbolize(const char *cmd, const struct hs_cli_opt *opts,
			    int key, const char *s, bool *raw);

/* --------------------------------------------------- "record/record.c" */

/* `heapscope record ...`: argv[0] is the program, argv[1] "record" (main.c
 * answers no command, --help, --version and an unknown one).  Installs
 * the SIGINT/SIGTERM handlers.  0, 1 (recording failed), 2 (bad command
 * line). */
int hs_record_main(int argc, char **argv);

/* --------------------------------------------------- "daemon/daemon.c" */

/* `heapscope daemon ...`: 0, 1 (failed), 2 (bad command line). */
int hs_daemon_main(int argc, char **argv);

/* -------------------------------------------------------- "cli/rate.c" */

/* `heapscope rate ...`: 0, 1 (failed, or not applied within --wait),
 * 2 (bad command line). */
int hs_rate_main(int argc, char **argv);

/* --------------------------------------------------------- "cli/rss.c" */

/* `heapscope rss ...`: 0, 1 (could not read the process), 2 (bad
 * command line). */
int hs_rss_main(int argc, char **argv);

/* ------------------------------------------------------- "cli/leaks.c" */

/* `heapscope leaks ...` (argv[0] "leaks"): the leak trends of one process
 * as JSON on stdout.  0, 1 (failed), 2 (bad command line). */
int hs_leaks_main(int argc, char **argv);

/* ----------------------------------------------- "cli/symbolize_cmd.c" */

/* `heapscope symbolize ...`: 0, 1 (failed), 2 (bad command line). */
int hs_symbolize_main(int argc, char **argv);

#endif /* HS_CLI_H */
