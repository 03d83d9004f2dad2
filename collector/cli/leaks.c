// SPDX-License-Identifier: MIT
/*
 * leaks.c - `heapscope leaks -p PID -d SECONDS`: the daemon's leak trends
 * (/debug/heapscope/leaks) for one process without the daemon.  It runs
 * record's pipeline (record/record.c: attach, registry, ring buffer) with
 * two hooks: each turn of the loop takes a point of the leak-trend store
 * (profiles/leaks.c) when --interval has passed, and the report is the
 * ranked JSON (export/export_leaks.c) on stdout instead of a profile.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "clock.h"
#include "record.h"
#include "ring.h"

static const char usage[] =
	"Usage: heapscope leaks -p PID [-d SECONDS] [--interval SECONDS]\n"
	"                       [--lib PATH] [--provider P] [-v]\n"
	"\n"
	"Follow a process that uses libheapscope.so for SECONDS and print, as\n"
	"JSON, its allocation sites ranked most suspect of leaking first: per\n"
	"stack, the growth of its estimated bytes in use (least squares over\n"
	"one point per interval), its standard error from the sampling\n"
	"noise, the bytes in use and the age of its oldest live object.  A\n"
	"site is \"growing\" when its growth is at least 3 standard errors\n"
	"and its oldest live object is at least half the window old, so that\n"
	"a stable allocation or a churning buffer is not flagged\n"
	"(docs/profiles.md, Leak trends).  The same JSON as the daemon's\n"
	"/debug/heapscope/leaks?pid=N.\n"
	"\n"
	"  -p, --pid PID        process to follow (must map libheapscope)\n"
	"  -d, --duration SEC   seconds to follow it, 2..86400 (default 60)\n"
	"      --interval SEC   seconds between two points, 1..3600 (default\n"
	"                       1); at most 720 points are kept\n"
	"      --lib PATH       object with the probes (as for record)\n"
	"      --provider P     auto (default), heapscope, otel_memory,\n"
	"                       ddheap (as for record)\n"
	"  -v, --verbose        libbpf and debug messages on stderr\n"
	"  -h, --help           this text\n"
	"\n"
	"Examples:\n"
	"  heapscope leaks -p 1234 -d 30\n"
	"  heapscope leaks -p $(pidof myserver) -d 600 --interval 5 |\n"
	"    jq '.stacks[] | select(.growing)'\n";

#define MAX_DURATION_S 86400
#define MAX_INTERVAL_S 3600

struct leaks_run {
	struct hs_leaks *store;
	uint64_t interval_ns;
};

static int leaks_tick(void *ctx, struct hs_events *ev, uint64_t now_ns)
{
	struct leaks_run *r = ctx;

	return hs_leaks__tick(r->store, ev->prof, ev->period, now_ns);
}

static int leaks_report(void *ctx, const struct hs_options *o,
			struct hs_events *ev, struct hs_syms *syms)
{
	struct leaks_run *r = ctx;
	struct hs_leak_series *ss = NULL;
	struct hs_leak_row *rows = NULL;
	size_t n = 0, nrows = 0;
	uint64_t now = hs_mono_ns();
	int err;

	/* the last point: what the ring buffer held at the end */
	err = hs_leaks__point(r->store, ev->prof, ev->period, now);
	if (!err)
		err = hs_leaks__copy(r->store, ev->prof, now, &ss, &n);
	if (!err)
		err = hs_leaks__report(ss, n, syms ? hs_syms__name : NULL, syms,
				       &rows, &nrows);
	if (!err && !nrows && ev->period <= 0)
		fprintf(stderr,
			"heapscope leaks: warning: no samples from pid %d and no "
			"sampling period known: sampling may be off in it "
			"(HEAPSCOPE_SAMPLE_RATE=0); turn it on with heapscope "
			"rate -p %d BYTES\n",
			(int)o->pid, (int)o->pid);
	if (!err)
		err = hs_leaks__write_json(
			stdout, o->pid, hs_leaks__window_s(r->store),
			(double)r->interval_ns / 1e9, ev->period, rows, nrows);
	if (!err && fflush(stdout))
		err = -errno;
	if (err)
		fprintf(stderr, "heapscope leaks: cannot report: %s\n",
			strerror(-err));
	hs_leak_rows__free(rows, nrows);
	hs_leak_series__free(ss, n);
	return err;
}

int hs_leaks_main(int argc, char **argv)
{
	enum { OPT_INTERVAL = 256, OPT_LIB, OPT_PROVIDER };
	const struct hs_cli_opt opts[] = {
		{"pid", 'p', hs_cli__pid_accepts()},
		{"duration", 'd', "whole seconds, 2..86400"},
		{"interval", OPT_INTERVAL, "whole seconds, 1..3600"},
		{"lib", OPT_LIB, "a path or a file-name prefix"},
		{"provider", OPT_PROVIDER,
		 "auto, heapscope, otel_memory or ddheap"},
		{"verbose", 'v', NULL},
		{"help", 'h', NULL},
		{NULL, 0, NULL},
	};
	const char *cmd = "leaks";
	struct hs_options o = {.value = HS_VALUE_INUSE, .duration_s = 60};
	struct leaks_run run = {.interval_ns = HS_NS_PER_S};
	struct hs_record_hooks hooks = {.cmd = cmd,
					.tick = leaks_tick,
					.report = leaks_report,
					.ctx = &run};
	struct sigaction sa = {.sa_handler = hs_record__on_signal};
	long v;
	int c, err;

	optind = 1;
	while ((c = hs_cli__next(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case 'p':
			if (hs_cli__parse_pid(cmd, "pid", optarg, &o.pid))
				return HS_EXIT_USAGE;
			break;
		case 'd':
			if (hs_cli__parse_long(optarg, 2, MAX_DURATION_S, &v)) {
				hs_cli__bad_value(cmd, "duration", optarg,
						  hs_cli__accepts(opts, 'd'));
				return HS_EXIT_USAGE;
			}
			o.duration_s = (int)v;
			break;
		case OPT_INTERVAL:
			if (hs_cli__parse_long(optarg, 1, MAX_INTERVAL_S, &v)) {
				hs_cli__bad_value(
					cmd, "--interval", optarg,
					hs_cli__accepts(opts, OPT_INTERVAL));
				return HS_EXIT_USAGE;
			}
			run.interval_ns = (uint64_t)v * HS_NS_PER_S;
			break;
		case OPT_LIB:
			if (hs_cli__parse_lib(cmd, opts, OPT_LIB, optarg,
					      &o.lib))
				return HS_EXIT_USAGE;
			break;
		case OPT_PROVIDER:
			if (hs_parse_provider(optarg, &o.provider)) {
				hs_cli__bad_value(
					cmd, "--provider", optarg,
					hs_cli__accepts(opts, OPT_PROVIDER));
				return HS_EXIT_USAGE;
			}
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return HS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		hs_cli__usage_error(cmd,
				    "unexpected argument '%.64s' (leaks takes "
				    "options only)",
				    argv[optind]);
		return HS_EXIT_USAGE;
	}
	if (!o.pid) {
		hs_cli__usage_error(cmd, "-p PID is required (%s)",
				    hs_cli__pid_accepts());
		return HS_EXIT_USAGE;
	}
	if ((uint64_t)o.duration_s * HS_NS_PER_S < 2 * run.interval_ns) {
		hs_cli__usage_error(cmd,
				    "-d %d is less than twice --interval %llu: "
				    "a growth needs 3 points",
				    o.duration_s,
				    (unsigned long long)(run.interval_ns /
							 HS_NS_PER_S));
		return HS_EXIT_USAGE;
	}
	hs_libbpf__print(o.verbose);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	run.store = hs_leaks__new(run.interval_ns);
	if (!run.store) {
		fprintf(stderr, "heapscope leaks: out of memory\n");
		return HS_EXIT_FAIL;
	}
	err = hs_record__run(&o, &hooks);
	hs_leaks__free(run.store);
	return err ? HS_EXIT_FAIL : 0;
}
