// SPDX-License-Identifier: MIT
/*
 * rss.c - `heapscope rss -p PID`: where a running process's RSS went,
 * from outside and without BPF (profiles/rss.c reads, export/export_rss.c
 * renders): JSON on stdout, or Prometheus text with --prometheus.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "profiles.h"

static const char usage[] =
	"Usage: heapscope rss -p PID [--lib PATH] [--prometheus]\n"
	"\n"
	"Where the resident memory of a running process that uses\n"
	"libheapscope.so went: the kernel's RSS split into heap in use (the\n"
	"resident pages of the bytes handed out), free committed heap\n"
	"(central lists included), thread caches, allocator metadata,\n"
	"sampling cost, other anonymous memory and file-backed pages, with\n"
	"the heap profile's sampled estimate beside the allocator's exact\n"
	"count of heap in use.  JSON on stdout.  Reads /proc/PID/mem,\n"
	"pagemap and smaps_rollup: root or CAP_SYS_PTRACE.  No BPF.\n"
	"\n"
	"  -p, --pid PID     the process\n"
	"      --lib PATH    the allocator object (as for record)\n"
	"      --prometheus  Prometheus text exposition instead of JSON\n"
	"  -h, --help        this text\n"
	"\n"
	"Examples:\n"
	"  heapscope rss -p 1234\n"
	"  heapscope rss -p 1234 | jq .parts\n"
	"  heapscope rss -p 1234 --prometheus\n";

enum { OPT_PROMETHEUS = 256 };

int hs_rss_main(int argc, char **argv)
{
	const struct hs_cli_opt opts[] = {
		{"pid", 'p', hs_cli__pid_accepts()},
		{"lib", 'L', "a path or a file-name prefix"},
		{"prometheus", OPT_PROMETHEUS, NULL},
		{"help", 'h', NULL},
		{NULL, 0, NULL},
	};
	const char *cmd = "rss", *lib = NULL;
	struct hs_rss_table t;
	bool prom = false;
	pid_t pid = 0;
	int c, err;

	optind = 1;
	while ((c = hs_cli__next(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case 'p':
			if (hs_cli__parse_pid(cmd, "pid", optarg, &pid))
				return HS_EXIT_USAGE;
			break;
		case 'L':
			if (hs_cli__parse_lib(cmd, opts, 'L', optarg, &lib))
				return HS_EXIT_USAGE;
			break;
		case OPT_PROMETHEUS:
			prom = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return HS_EXIT_USAGE;
		}
	}
	if (!pid) {
		hs_cli__usage_error(cmd, "-p PID is required (%s)",
				    hs_cli__pid_accepts());
		return HS_EXIT_USAGE;
	}
	if (optind < argc) {
		hs_cli__usage_error(cmd, "unexpected argument '%.64s' (none)",
				    argv[optind]);
		return HS_EXIT_USAGE;
	}
	err = hs_rss_table_read(pid, lib, &t);
	switch (err) {
	case 0:
		break;
	case -ESRCH:
		fprintf(stderr,
			"heapscope rss: no process %d (it has exited, or the "
			"pid is wrong)\n",
			pid);
		return HS_EXIT_FAIL;
	case -ENOENT:
		fprintf(stderr,
			"heapscope rss: process %d maps no libheapscope "
			"(preload it, or pass --lib)\n",
			pid);
		return HS_EXIT_FAIL;
	case -EPROTONOSUPPORT:
		fprintf(stderr,
			"heapscope rss: the libheapscope of process %d has no "
			"statistics block (symbol %s: a library older than "
			"this collector)\n",
			pid, HEAPSCOPE_STATS_SYMBOL);
		return HS_EXIT_FAIL;
	case -EBADMSG:
		fprintf(stderr,
			"heapscope rss: the statistics block of process %d "
			"is not valid (corrupt, or another version)\n",
			pid);
		return HS_EXIT_FAIL;
	default:
		fprintf(stderr,
			"heapscope rss: cannot read process %d: %s (needs "
			"root or CAP_SYS_PTRACE)\n",
			pid, strerror(-err));
		return HS_EXIT_FAIL;
	}
	if (prom) {
		char labels[32];

		snprintf(labels, sizeof(labels), "pid=\"%d\"", (int)pid);
		for (unsigned fam = 0; fam < HS_RSS_PROM_FAMILIES; fam++) {
			hs_rss__prom_help(stdout, fam);
			hs_rss__prom_samples(stdout, fam, &t, labels);
		}
	} else {
		hs_rss__write_json(stdout, &t);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "heapscope rss: cannot write the output: %s\n",
			strerror(errno));
		return HS_EXIT_FAIL;
	}
	return 0;
}
