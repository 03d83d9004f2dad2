// SPDX-License-Identifier: MIT
/*
 * main.c - `heapscope COMMAND ...`: the table of commands, which gives
 * `heapscope --help` its list (and man/help2roff.awk the NAME line of each
 * command's man page), --version, and the hand-over of the command line
 * to the command: record (record.c), daemon (daemon.c), rate (rate.c),
 * rss (rss.c), leaks (leaks.c), symbolize (symbolize_cmd.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "heapscope_version.h"

/* The other commands take argv from the command name on. */
static int daemon_cmd(int argc, char **argv)
{
	return hs_daemon_main(argc - 1, argv + 1);
}

static int rate_cmd(int argc, char **argv)
{
	return hs_rate_main(argc - 1, argv + 1);
}

static int rss_cmd(int argc, char **argv)
{
	return hs_rss_main(argc - 1, argv + 1);
}

static int leaks_cmd(int argc, char **argv)
{
	return hs_leaks_main(argc - 1, argv + 1);
}

static int symbolize_cmd(int argc, char **argv)
{
	return hs_symbolize_main(argc - 1, argv + 1);
}

static const struct command {
	const char *name;
	const char *summary; /* one line, lower case, no full stop */
	int (*main)(int argc, char **argv); /* whole argv; exit status */
} commands[] = {
	{"record", "record the heap profile of one process", hs_record_main},
	{"daemon",
	 "profile every process that uses the library, pprof over HTTP",
	 daemon_cmd},
	{"rate", "set a running process's sampling period (0: off)", rate_cmd},
	{"rss", "where a running process's resident memory went", rss_cmd},
	{"leaks", "rank one process's allocation sites by heap growth (JSON)",
	 leaks_cmd},
	{"symbolize", "name the functions of a profile recorded unsymbolized",
	 symbolize_cmd},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("Usage: heapscope COMMAND [OPTION]...\n"
	      "       heapscope --help | --version\n"
	      "\n"
	      "Profile the heap of the processes that use libheapscope (or\n"
	      "another allocator with compatible probes) through BPF.  The\n"
	      "commands run as root: they load BPF programs and read other\n"
	      "processes' memory.\n"
	      "\n"
	      "Commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name,
			commands[i].summary);
	fputs("\n"
	      "Options:\n"
	      "  -h, --help     this text\n"
	      "  -V, --version  the version, and the git revision built from\n"
	      "\n"
	      "Each command has its own help: heapscope COMMAND --help.  The\n"
	      "library's options (environment variables): man 7 "
	      "libheapscope.\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *cmd = argc >= 2 ? argv[1] : NULL;

	if (!cmd) {
		hs_cli__usage_error(NULL, "no command (record, daemon, rate, "
					  "rss, leaks or symbolize)");
		return 2;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		if (HS_GIT_DESCRIBE[0])
			printf("heapscope %s (git %s)\n", HS_VERSION,
			       HS_GIT_DESCRIBE);
		else
			printf("heapscope %s\n", HS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].main(argc, argv);
	char q[80];

	/* quoted safely: at most 64 bytes, control characters as '?' */
	snprintf(q, sizeof(q), "%.64s", cmd);
	for (char *s = q; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
	hs_cli__usage_error(NULL,
			    "unknown command '%s' (record, daemon, rate, rss, "
			    "leaks or symbolize)",
			    q);
	return 2;
}
