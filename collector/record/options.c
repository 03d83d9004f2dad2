// SPDX-License-Identifier: MIT
/*
 * options.c - the `heapscope record` command line: its help text and the
 * parser that fills struct hs_options (the names of --value, --profile,
 * --format and --provider: base/kinds.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

static const char usage[] =
	"Usage: heapscope record -p PID [-d SECONDS] [-o FILE] [--format F]\n"
	"                        [--value V] [--lib "
	"PATH] [--provider P]\n"
	"                        [--profile heap|allocs|lifetime|peak|"
	"fragmentation]\n"
	"                        [-v]\n"
	"\n"
	"Record the live heap of a process using libheapscope.so and write it\n"
	"as flame-graph folded stacks (root;...;leaf VALUE), largest first.\n"
	"\n"
	"  -p, --pid PID        process to profile (must map libheapscope)\n"
	"  -d, --duration SEC   stop after SEC seconds (default: until the\n"
	"                       process exits or SIGINT/SIGTERM)\n"
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

int hs_record__parse_args(int argc, char **argv, struct hs_options *o)
{
	enum {
		OPT_VALUE = 256,
		OPT_LIB,
		OPT_FORMAT,
		OPT_PROFILE,
		OPT_FORCE,
		OPT_PROVIDER,
	};
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"value", required_argument, NULL, OPT_VALUE},
		{"force", no_argument, NULL, OPT_FORCE},
		{"lib", required_argument, NULL, OPT_LIB},
		{"provider", required_argument, NULL, OPT_PROVIDER},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"profile", required_argument, NULL, OPT_PROFILE},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *value_arg = NULL;
	char *end;
	long v;
	int c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? -EINVAL : 1;
	}
	if (strcmp(argv[1], "record")) {
		fprintf(stderr,
			"heapscope: unknown command '%s' (try 'heapscope "
			"record --help')\n",
			argv[1]);
		return -EINVAL;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "p:d:o:vh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'p':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v <= 0 || v > INT32_MAX) {
				fprintf(stderr, "heapscope: invalid pid '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->pid = (pid_t)v;
			break;
		case 'd':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v <= 0 || v > 86400 * 365) {
				fprintf(stderr,
					"heapscope: invalid duration '%s' "
					"(whole seconds > 0)\n",
					optarg);
				return -EINVAL;
			}
			o->duration_s = (int)v;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_VALUE:
			if (hs_parse_value(optarg, &o->value)) {
				fprintf(stderr,
					"heapscope: invalid --value '%s' "
					"(inuse, requested, objects, "
					"resident, swapped, not_resident, "
					"huge)\n",
					optarg);
				return -EINVAL;
			}
			o->value_set = true;
			value_arg = optarg;
			break;
		case OPT_PROFILE:
			if (hs_parse_profile(optarg, &o->profile)) {
				fprintf(stderr,
					"heapscope: invalid --profile '%s' "
					"(heap, allocs, lifetime, peak or "
					"fragmentation)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_LIB:
			o->lib = optarg;
			break;
		case OPT_PROVIDER:
			if (hs_parse_provider(optarg, &o->provider)) {
				fprintf(stderr,
					"heapscope: invalid --provider '%s' "
					"(auto, heapscope, otel_memory or "
					"ddheap)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_FORMAT:
			if (hs_parse_format(optarg, &o->format)) {
				fprintf(stderr,
					"heapscope: invalid --format '%s' "
					"(folded, pprof or text)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fprintf(stderr, "(try 'heapscope record --help')\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "heapscope: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (o->value_set && !hs_profile_kind__has_value(o->profile, o->value)) {
		fprintf(stderr,
			"heapscope: --value %s does not belong to --profile "
			"%s (it has: %s)\n",
			value_arg, hs_profile_kind__name(o->profile),
			hs_profile_kind__values(o->profile));
		return -EINVAL;
	}
	if (!o->pid) {
		fprintf(stderr, "heapscope: -p PID is required (try 'heapscope "
				"record --help')\n");
		return -EINVAL;
	}
	return 0;
}
