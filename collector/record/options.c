// SPDX-License-Identifier: MIT
/*
 * options.c - the `heapscope record` command line: its help text and the
 * parser that fills struct hs_options (the names of --value, --profile,
 * --format and --provider: base/kinds.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "record.h"

static const char usage[] =
	"Usage: heapscope record -p PID [-d SECONDS] [-o FILE] [--format F]\n"
	"                        [--value V] [--lib "
	"PATH] [--provider P]\n"
	"                        [--profile heap|allocs|lifetime|peak|"
	"fragmentation]\n"
	"                        [--symbolize local|none] [-v]\n"
	"\n"
	"Record the live heap of a process using libheapscope.so and write it\n"
	"as flame-graph folded stacks (root;...;leaf VALUE), largest first.\n"
	"\n"
	"  -p, --pid PID        process to profile (must map libheapscope)\n"
	"  -d, --duration SEC   stop after SEC seconds, 1..31536000 (default:\n"
	"                       until the process exits or SIGINT/SIGTERM)\n"
	"  -o, --output FILE    write the profile to FILE (default: stdout);\n"
	"                       an existing FILE is kept unless --force\n"
	"      --force          let -o replace an existing FILE\n"
	"      --format F       folded (default), pprof (gzip'd profile.proto\n"
	"                       for go tool pprof), text (short top list)\n"
	"      --value V        inuse (estimated allocated bytes, default),\n"
	"                       requested (estimated requested bytes),\n"
	"                       objects (estimated number of objects),\n"
	"                       resident, swapped, not_resident, huge\n"
	"                       (inuse scaled by the sample's page states;\n"
	"                       docs/profiles.md)\n"
	"      --lib PATH       object with the probes: a path, or a "
	"file-name\n"
	"                       prefix (default: libheapscope, else any "
	"mapped\n"
	"                       file with a heapscope USDT note)\n"
	"      --provider P     auto (default: heapscope's probes if the\n"
	"                       process has them, else otel_memory, else\n"
	"                       ddheap), heapscope, otel_memory, ddheap:\n"
	"                       read another allocator's alloc(ptr, size,\n"
	"                       weight)/free(ptr) probes (no registry: only\n"
	"                       samples after the attach; docs/collector.md)\n"
	"      --profile P      heap (live samples now, default), allocs\n"
	"                       (sampled allocations within the window),\n"
	"                       lifetime (allocated and freed within the\n"
	"                       window: alloc;[free];free stacks, --value\n"
	"                       objects (default), lifetime (summed ns),\n"
	"                       lifetime_mean, lifetime_min, lifetime_max\n"
	"                       (ns), same_thread),\n"
	"                       peak (heap at the highest estimated total,\n"
	"                       1% resolution), fragmentation (bytes the\n"
	"                       proxies' spans cannot return; docs/profiles.md)\n"
	"      --symbolize S    local (default: names, source lines and\n"
	"                       inlined calls from the binaries' symbols and\n"
	"                       debug info, DEBUGINFOD_URLS' servers too),\n"
	"                       none (pprof keeps raw addresses and mappings\n"
	"                       with build ids, for heapscope symbolize, go\n"
	"                       tool pprof or Parca to symbolize later;\n"
	"                       folded and text show module+0xoffset)\n"
	"  -v, --verbose        libbpf and debug messages on stderr\n"
	"  -h, --help           this text\n"
	"\n"
	"Examples:\n"
	"  heapscope record -p 1234 -d 10 -o heap.folded\n"
	"  heapscope record -p $(pidof myserver) --value objects | "
	"flamegraph.pl\n"
	"  heapscope record -p 1234 --lib /opt/app/lib/libheapscope.so.1\n"
	"  heapscope record -p 1234 -d 5 --format pprof -o heap.pb.gz &&\n"
	"    go tool pprof -top heap.pb.gz\n"
	"\n"
	"Other commands: heapscope daemon --help, heapscope rate --help\n";

/* What --value accepts (hs_parse_value), for its error. */
#define VALUES                                                                 \
	"inuse, requested, objects, resident, swapped, not_resident, huge, "  \
	"lifetime_mean, lifetime_min, lifetime_max, same_thread, "            \
	"fragmentation or fragmentation_age"
#define MAX_DURATION_S 31536000 /* 365 days */
#define STR_(x) #x
#define STR(x) STR_(x)

int hs_record__parse_args(int argc, char **argv, struct hs_options *o)
{
	enum {
		OPT_VALUE = 256,
		OPT_LIB,
		OPT_FORMAT,
		OPT_PROFILE,
		OPT_FORCE,
		OPT_PROVIDER,
		OPT_SYMBOLIZE,
	};
	const struct hs_cli_opt opts[] = {
		{"pid", 'p', hs_cli__pid_accepts()},
		{"duration", 'd', "whole seconds, 1.." STR(MAX_DURATION_S)},
		{"output", 'o', "a file name, or - for stdout"},
		{"value", OPT_VALUE, VALUES},
		{"force", OPT_FORCE, NULL},
		{"lib", OPT_LIB, "a path or a file-name prefix"},
		{"provider", OPT_PROVIDER,
		 "auto, heapscope, otel_memory or ddheap"},
		{"format", OPT_FORMAT, "folded, pprof or text"},
		{"profile", OPT_PROFILE,
		 "heap, allocs, lifetime, peak or fragmentation"},
		{"symbolize", OPT_SYMBOLIZE, "local or none"},
		{"verbose", 'v', NULL},
		{"help", 'h', NULL},
		{NULL, 0, NULL},
	};
	const char *cmd = "record";
	const char *value_arg = NULL;
	long v;
	int c;

	/* argv[1] is "record" (main.c dispatches on it). */
	optind = 2;
	while ((c = hs_cli__next(cmd, argc, argv, opts)) != -1) {
		switch (c) {
		case 'p':
			if (hs_cli__parse_pid(cmd, "pid", optarg, &o->pid))
				return -EINVAL;
			break;
		case 'd':
			if (hs_cli__parse_long(optarg, 1, MAX_DURATION_S, &v))
				return hs_cli__bad_value(
					cmd, "duration", optarg,
					hs_cli__accepts(opts, 'd'));
			o->duration_s = (int)v;
			break;
		case 'o':
			if (!*optarg)
				return hs_cli__bad_value(
					cmd, "--output", optarg,
					hs_cli__accepts(opts, 'o'));
			o->output = optarg;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_VALUE:
			if (hs_parse_value(optarg, &o->value))
				return hs_cli__bad_value(cmd, "--value", optarg,
							 VALUES);
			o->value_set = true;
			value_arg = optarg;
			break;
		case OPT_PROFILE:
			if (hs_parse_profile(optarg, &o->profile))
				return hs_cli__bad_value(
					cmd, "--profile", optarg,
					hs_cli__accepts(opts, OPT_PROFILE));
			break;
		case OPT_LIB:
			if (hs_cli__parse_lib(cmd, opts, OPT_LIB, optarg,
					      &o->lib))
				return -EINVAL;
			break;
		case OPT_PROVIDER:
			if (hs_parse_provider(optarg, &o->provider))
				return hs_cli__bad_value(
					cmd, "--provider", optarg,
					hs_cli__accepts(opts, OPT_PROVIDER));
			break;
		case OPT_FORMAT:
			if (hs_parse_format(optarg, &o->format))
				return hs_cli__bad_value(
					cmd, "--format", optarg,
					hs_cli__accepts(opts, OPT_FORMAT));
			break;
		case OPT_SYMBOLIZE:
			if (hs_cli__parse_symbolize(cmd, opts, OPT_SYMBOLIZE,
						    optarg, &o->raw_symbols))
				return -EINVAL;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		return hs_cli__usage_error(cmd,
					   "unexpected argument '%.64s' (record "
					   "takes options only)",
					   argv[optind]);
	if (o->value_set && !hs_profile_kind__has_value(o->profile, o->value))
		return hs_cli__usage_error(
			cmd, "--value %s does not belong to --profile %s (it has: %s)",
			value_arg, hs_profile_kind__name(o->profile),
			hs_profile_kind__values(o->profile));
	if (!o->pid)
		return hs_cli__usage_error(cmd, "-p PID is required (%s)",
					   hs_cli__pid_accepts());
	return 0;
}
