// SPDX-License-Identifier: MIT
/*
 * main.c - `heapscope record`: attach to a process's heapscope probes, read
 * its registry of live samples, follow allocations and frees through the
 * BPF ring buffer, and write the heap profile as folded stacks.
 *
 * main reads as phases: parse, check, open, configure, load, attach, read
 * the registry, loop, report, clean up.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach.h"
#include "heapscope.h"
#include "heapscope_event.h"

static volatile sig_atomic_t exiting;
static bool verbose;

static const char usage[] =
	"Usage: heapscope record -p PID [-d SECONDS] [-o FILE] [--format F]\n"
	"                        [--value V] [--lib "
	"PATH]\n"
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
	"      --profile P      heap (live samples now, default), allocs\n"
	"                       (sampled allocations within the window),\n"
	"                       lifetime (allocated and freed within the\n"
	"                       window: alloc;[free];free stacks, --value\n"
	"                       objects (default), lifetime_mean,\n"
	"                       lifetime_min, lifetime_max (ns), same_thread),\n"
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

int hs_parse_value(const char *s, enum hs_value *out)
{
	if (!strcmp(s, "inuse") || !strcmp(s, "inuse_space"))
		*out = HS_VALUE_INUSE;
	else if (!strcmp(s, "requested"))
		*out = HS_VALUE_REQUESTED;
	else if (!strcmp(s, "objects") || !strcmp(s, "inuse_objects"))
		*out = HS_VALUE_OBJECTS;
	else if (!strcmp(s, "resident"))
		*out = HS_VALUE_RESIDENT;
	else if (!strcmp(s, "swapped"))
		*out = HS_VALUE_SWAPPED;
	else if (!strcmp(s, "not_resident"))
		*out = HS_VALUE_NOT_RESIDENT;
	else if (!strcmp(s, "huge"))
		*out = HS_VALUE_HUGE;
	else if (!strcmp(s, "lifetime_mean"))
		*out = HS_VALUE_LIFETIME_MEAN;
	else if (!strcmp(s, "lifetime_min"))
		*out = HS_VALUE_LIFETIME_MIN;
	else if (!strcmp(s, "lifetime_max"))
		*out = HS_VALUE_LIFETIME_MAX;
	else if (!strcmp(s, "same_thread"))
		*out = HS_VALUE_SAME_THREAD;
	else if (!strcmp(s, "fragmentation"))
		*out = HS_VALUE_FRAGMENTATION;
	else if (!strcmp(s, "fragmentation_age"))
		*out = HS_VALUE_FRAGMENTATION_AGE;
	else
		return -EINVAL;
	return 0;
}

int hs_parse_profile(const char *s, enum hs_profile_kind *out)
{
	static const char *const names[] = {"heap", "allocs", "lifetime",
					    "peak", "fragmentation"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum hs_profile_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *hs_value_name(enum hs_value v)
{
	switch (v) {
	case HS_VALUE_REQUESTED:
		return "requested bytes";
	case HS_VALUE_OBJECTS:
		return "objects";
	case HS_VALUE_RESIDENT:
		return "resident bytes";
	case HS_VALUE_SWAPPED:
		return "swapped bytes";
	case HS_VALUE_NOT_RESIDENT:
		return "not-resident bytes";
	case HS_VALUE_HUGE:
		return "huge-page bytes";
	case HS_VALUE_LIFETIME_MEAN:
		return "ns mean lifetime";
	case HS_VALUE_LIFETIME_MIN:
		return "ns min lifetime";
	case HS_VALUE_LIFETIME_MAX:
		return "ns max lifetime";
	case HS_VALUE_SAME_THREAD:
		return "objects freed by their thread";
	case HS_VALUE_FRAGMENTATION:
		return "fragmentation bytes (proxy)";
	case HS_VALUE_FRAGMENTATION_AGE:
		return "fragmentation bytes (age-weighted)";
	default:
		return "inuse bytes";
	}
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	/* libbpf's own messages only with -v; failures are reported by the
	 * collector with a remedy instead. */
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int parse_args(int argc, char **argv, struct hs_options *o)
{
	enum { OPT_VALUE = 256, OPT_LIB, OPT_FORMAT, OPT_PROFILE, OPT_FORCE };
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"value", required_argument, NULL, OPT_VALUE},
		{"force", no_argument, NULL, OPT_FORCE},
		{"lib", required_argument, NULL, OPT_LIB},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"profile", required_argument, NULL, OPT_PROFILE},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
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
	if (!o->pid) {
		fprintf(stderr, "heapscope: -p PID is required (try 'heapscope "
				"record --help')\n");
		return -EINVAL;
	}
	return 0;
}

/* Fail before attaching if the profile could not be written. */
static int check_output(const char *path)
{
	char tmp[PATH_MAX];
	int fd;

	struct stat st;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return -EINVAL; /* /dev/null, a FIFO: not replaceable */
	if (!hs_output_force && !lstat(path, &st))
		return -EEXIST;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(tmp);
	return 0;
}

static bool process_alive(pid_t pid)
{
	return !(kill(pid, 0) && errno == ESRCH);
}

/* Events handled per ring_buffer__poll: under a sustained stream libbpf's
 * consume loop would never return, and -d / SIGINT would not be honoured.
 * A negative return from the callback ends the batch (libbpf has already
 * consumed that record). */
#define EVENT_BATCH 4096
static unsigned batch_left = EVENT_BATCH;

static int on_event_batched(void *ctx, void *data, size_t size)
{
	hs_events__handle(ctx, data, size);
	return --batch_left ? 0 : -EAGAIN;
}

/* Take what is in the ring buffer when the loop ends, bounded to one
 * second so a target that keeps allocating cannot hold the exit. */
static void drain(struct ring_buffer *rb)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		batch_left = EVENT_BATCH;
		if (ring_buffer__consume(rb) != -EAGAIN)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Registry records sampled before the attach join the live set. */
static void read_registry(const struct hs_target *t, struct hs_events *ev)
{
	struct hs_registry_snapshot snap;
	uint64_t addr;
	pid_t pid = t->pid;
	size_t added = 0;
	int err;

	err = hs_registry__locate(t, &addr);
	if (err) {
		fprintf(stderr,
			"heapscope: warning: no %s symbol in %s (%s); samples "
			"taken before the attach are missing\n",
			HEAPSCOPE_REGISTRY_SYMBOL, t->path, strerror(-err));
		return;
	}
	err = hs_registry__read(hs_registry__read_process, &pid, addr, &snap);
	if (err) {
		fprintf(stderr,
			"heapscope: warning: cannot read the registry at "
			"0x%llx: %s; samples taken before the attach are "
			"missing\n",
			(unsigned long long)addr,
			err == -EBADMSG	 ? "invalid contents"
			: err == -EAGAIN ? "never stable (busy writer)"
					 : strerror(-err));
		return;
	}
	for (size_t i = 0; i < snap.n; i++) {
		const struct heapscope_record *r = &snap.recs[i];
		struct hs_sample s;

		hs_sample__from_record(&s, r);
		if (ev->syms)
			hs_syms__check(ev->syms, s.stack, s.depth);
		if (hs_profile__alloc(ev->prof, &s) == 0) {
			added++;
			if (ev->win)
				hs_window__live_alloc(ev->win, &s, ev->prof);
		}
	}
	if (!ev->period)
		ev->period = snap.hdr.sample_period;
	if (verbose || snap.invalid)
		fprintf(stderr,
			"heapscope: registry: %zu live records (%zu new), %llu "
			"invalid, %u retries%s\n",
			snap.n, added, (unsigned long long)snap.invalid,
			snap.retries,
			snap.per_record ? ", per-record copy" : "");
	hs_registry__free(&snap);
}

static uint64_t read_lost(struct heapscope_bpf *skel, uint64_t out[HS_LOST_NR])
{
	int ncpu = libbpf_num_possible_cpus(),
	    fd = bpf_map__fd(skel->maps.lost);
	uint64_t total = 0;
	uint64_t *vals;

	memset(out, 0, HS_LOST_NR * sizeof(out[0]));
	if (ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	for (uint32_t k = 0; k < HS_LOST_NR; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
		total += out[k];
	}
	free(vals);
	return total;
}

static void print_summary(const struct hs_options *o,
			  const struct hs_events *ev,
			  const struct hs_folded_line *lines, size_t n,
			  const uint64_t lost[HS_LOST_NR], uint64_t seq_lost)
{
	double total = 0;

	for (size_t i = 0; i < n; i++)
		total += lines[i].value;
	fprintf(stderr,
		"heapscope: pid %d: %zu live samples, estimated %.0f %s, %zu "
		"stacks\n",
		o->pid, hs_profile__live(ev->prof), total,
		hs_value_name(o->value), n);
	fprintf(stderr,
		"heapscope: events: %llu allocs, %llu frees; lost: %llu ring "
		"buffer, %llu stack reads, %llu args, %llu sequence gaps, %llu "
		"malformed\n",
		(unsigned long long)ev->allocs, (unsigned long long)ev->frees,
		(unsigned long long)lost[HS_LOST_RINGBUF],
		(unsigned long long)lost[HS_LOST_STACK],
		(unsigned long long)lost[HS_LOST_ARGS],
		(unsigned long long)seq_lost, (unsigned long long)ev->bad);
	for (size_t i = 0; i < n && i < 5; i++)
		fprintf(stderr, "  #%zu %12.0f  %.300s\n", i + 1,
			lines[i].value, lines[i].stack);
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The profile in the requested format, with its notes as pprof comments. */
static int write_report(const struct hs_options *o, const struct hs_target *t,
			const struct hs_proc_info *pi,
			const struct hs_events *ev,
			const struct hs_stack_agg *aggs, size_t naggs,
			const struct hs_folded_line *lines, size_t nlines,
			const uint64_t lost[HS_LOST_NR], uint64_t start_ns)
{
	struct hs_report_stats st = {
		.pid = o->pid,
		.nspid = pi->nspid,
		.binary = pi->binary,
		.live = hs_profile__live(ev->prof),
		.lost_ringbuf = lost[HS_LOST_RINGBUF],
		/* record follows one pid: every drop is its own */
		.lost_ringbuf_proc = lost[HS_LOST_RINGBUF],
		.seq_lost = hs_profile__seq_lost(ev->prof),
		.lost_stack = lost[HS_LOST_STACK],
		.period = ev->period,
	};
	struct heapscope_registry h;
	char comments[6][160];
	const char *cptr[6];
	uint64_t addr, now = wall_ns();
	struct hs_pprof_meta meta = {
		.pid = o->pid,
		.nspid = pi->nspid,
		.comm = pi->comm,
		.cgroup = pi->cgroup,
		.period = ev->period,
		.time_nanos = (int64_t)start_ns,
		.duration_nanos = (int64_t)(now - start_ns),
		.comments = cptr,
		.residency = o->profile == HS_PROFILE_HEAP,
		.allocs = o->profile == HS_PROFILE_ALLOCS,
	};

	if (!hs_registry__locate(t, &addr) &&
	    !hs_registry__read_header(o->pid, addr, &h)) {
		st.sampled_bytes = h.sampled_bytes;
		st.records = h.live;
	}
	meta.ncomments = hs_report__comments(comments, 4, &st);
	if (o->profile == HS_PROFILE_LIFETIME)
		hs_window__pprof_lifetime(&meta);
	else if (o->profile == HS_PROFILE_FRAGMENTATION)
		hs_fragmentation__pprof(&meta);
	if (o->profile == HS_PROFILE_PEAK && ev->win) {
		double total;
		struct hs_stack_agg *tmp;
		size_t ntmp;

		if (!hs_window__peak(ev->win, &tmp, &ntmp, &total)) {
			free(tmp);
			snprintf(comments[meta.ncomments], 160,
				 "heapscope: peak profile: estimated in-use "
				 "total %.0f bytes (1%% resolution, %llu "
				 "copies)",
				 total,
				 (unsigned long long)hs_window__peak_snapshots(
					 ev->win));
			meta.ncomments++;
		}
	}
	for (size_t i = 0; i < meta.ncomments; i++)
		cptr[i] = comments[i];
	return hs_report__write(o->output, o->format, o->value, aggs, naggs,
				lines, nlines, ev->syms, &meta);
}

static int record(const struct hs_options *o)
{
	struct heapscope_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct hs_folded_line *lines = NULL;
	struct hs_stack_agg *aggs = NULL;
	struct hs_events ev = {.pid = o->pid, .verbose = o->verbose};
	struct hs_target t;
	struct hs_proc_info pi;
	uint64_t lost[HS_LOST_NR], start_ns = wall_ns();
	size_t naggs = 0, nlines = 0;
	double deadline = 0;
	uint8_t one = 1;
	uint32_t key = o->pid;
	struct hs_options eff = *o;
	int err;

	/* The folded value when --value was not given depends on --profile. */
	if (!eff.value_set)
		eff.value = hs_profile_kind__default_value(o->profile);
	o = &eff;

	/* Check: everything that can fail cheaply, before touching BPF. */
	if (geteuid() != 0) {
		fprintf(stderr,
			"heapscope: must run as root (BPF and USDT attach need "
			"CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE)\n");
		return -EPERM;
	}
	if (!process_alive(o->pid)) {
		fprintf(stderr, "heapscope: no process %d\n", o->pid);
		return -ESRCH;
	}
	err = hs_target__find(&t, o->pid, o->lib);
	if (err == -ENOENT) {
		fprintf(stderr,
			"heapscope: process %d does not use libheapscope%s%s "
			"(not in /proc/%d/maps; preload libheapscope.so or "
			"pass --lib)\n",
			o->pid, o->lib ? " matching " : "",
			o->lib ? o->lib : "", o->pid);
		return err;
	} else if (err) {
		fprintf(stderr, "heapscope: cannot inspect process %d: %s\n",
			o->pid, strerror(-err));
		return err;
	}
	hs_output_force = o->force;
	err = check_output(o->output);
	if (err) {
		fprintf(stderr, "heapscope: cannot write %s: %s%s\n", o->output,
			strerror(-err),
			err == -EEXIST	 ? " (pass --force to replace it)" :
			err == -EINVAL ? " (not a regular file: leave out "
					 "-o and redirect stdout)" :
					 "");
		return err;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "heapscope: BPF not available: the kernel has "
				"no BTF (/sys/kernel/btf/vmlinux); need "
				"CONFIG_DEBUG_INFO_BTF\n");
		return -ENOSYS;
	}

	/* Open, configure, load. */
	skel = heapscope_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr,
			"heapscope: BPF not available: cannot open the BPF "
			"object: %s\n",
			strerror(-err));
		return err;
	}
	skel->rodata->trace_all_exits = 0;
	err = heapscope_bpf__load(skel);
	if (err) {
		fprintf(stderr,
			"heapscope: BPF not available: cannot load the BPF "
			"programs: %s (run with -v for the verifier log)\n",
			strerror(-err));
		goto cleanup;
	}
	if (bpf_map__update_elem(skel->maps.tracked_pids, &key, sizeof(key),
				 &one, sizeof(one), BPF_ANY)) {
		err = -errno;
		fprintf(stderr, "heapscope: cannot track pid %d: %s\n", o->pid,
			strerror(-err));
		goto cleanup;
	}
	ev.prof = hs_profile__new();
	ev.win = hs_window__new((uint64_t)(now_s() * 1e9));
	if (!ev.prof || !ev.win) {
		err = -ENOMEM;
		goto cleanup;
	}

	/* Attach, then snapshot maps and the registry: a sample is either in
	 * the registry, in the ring buffer, or in both (deduplicated). */
	err = hs_attach__probes(skel, &t);
	if (err) {
		fprintf(stderr,
			"heapscope: cannot attach to %s in process %d: %s\n",
			t.path, o->pid, strerror(-err));
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event_batched,
			      &ev, NULL);
	if (!rb) {
		err = -errno;
		fprintf(stderr,
			"heapscope: cannot create the ring buffer: %s\n",
			strerror(-err));
		goto cleanup;
	}
	hs_proc__info(o->pid, &pi);
	ev.syms = hs_syms__new(o->pid);
	if (!ev.syms)
		fprintf(stderr,
			"heapscope: warning: cannot snapshot /proc/%d/maps; "
			"stacks will be addresses\n",
			o->pid);
	hs_window__loading(ev.win, true);
	read_registry(&t, &ev);
	hs_window__loading(ev.win, false);
	hs_window__peak_check(ev.win, ev.prof);
	if (o->verbose)
		fprintf(stderr, "heapscope: attached to %s in process %d\n",
			t.path, o->pid);

	/* Loop until the duration, a signal, or the target's end. */
	if (o->duration_s)
		deadline = now_s() + o->duration_s;
	while (!exiting) {
		batch_left = EVENT_BATCH;
		err = ring_buffer__poll(rb, 100);
		if (err == -EINTR || err == -EAGAIN) {
			err = 0;
			if (!(deadline && now_s() >= deadline))
				continue;
		}
		if (err < 0) {
			fprintf(stderr,
				"heapscope: ring buffer poll failed: %s\n",
				strerror(-err));
			goto cleanup;
		}
		err = 0;
		hs_syms__tick(ev.syms);
		if (ev.exited || ev.execed || !process_alive(o->pid))
			break;
		if (deadline && now_s() >= deadline)
			break;
	}
	drain(rb);
	if (ev.execed)
		fprintf(stderr,
			"heapscope: process %d called exec; profile as of "
			"before the exec\n",
			o->pid);
	else if (ev.exited || !process_alive(o->pid))
		fprintf(stderr,
			"heapscope: process %d exited%s; profile as of its "
			"exit\n",
			o->pid, ev.exited ? "" : " (seen by polling)");

	/* Report. */
	hs_syms__sync(ev.syms);
	if ((o->profile == HS_PROFILE_HEAP ||
	     o->profile == HS_PROFILE_FRAGMENTATION) &&
	    !ev.exited && process_alive(o->pid)) {
		int rerr = hs_profile__scan_residency(ev.prof, o->pid);

		if (rerr)
			fprintf(stderr,
				"heapscope: warning: residency not read: %s "
				"(needs root for /proc/kpageflags)\n",
				strerror(-rerr));
	}
	if (o->profile == HS_PROFILE_FRAGMENTATION) {
		uint64_t raddr;
		int ferr = hs_registry__locate(&t, &raddr);

		if (!ferr)
			ferr = hs_fragmentation__read(ev.prof, o->pid, raddr);
		if (ferr)
			fprintf(stderr,
				"heapscope: warning: no proxy span data: %s "
				"(the fragmentation profile needs a live "
				"target and a library with the record "
				"extension)\n",
				strerror(-ferr));
	}
	err = hs_record__aggregate(o->profile, ev.prof, ev.win, &aggs, &naggs);
	if (!err)
		err = hs_folded__build(aggs, naggs, o->value, hs_window__sym,
				       ev.syms, &lines, &nlines);
	if (err) {
		fprintf(stderr, "heapscope: cannot build the profile: %s\n",
			strerror(-err));
		goto cleanup;
	}
	read_lost(skel, lost);
	err = write_report(o, &t, &pi, &ev, aggs, naggs, lines, nlines, lost,
			   start_ns);
	if (err) {
		fprintf(stderr, "heapscope: cannot write %s: %s\n",
			o->output ? o->output : "stdout", strerror(-err));
		goto cleanup;
	}
	if (o->verbose)
		fprintf(stderr, "heapscope: maps snapshot refreshed %u times\n",
			hs_syms__refreshes(ev.syms));
	print_summary(o, &ev, lines, nlines, lost,
		      hs_profile__seq_lost(ev.prof));

cleanup:
	hs_folded__free(lines, nlines);
	free(aggs);
	ring_buffer__free(rb);
	hs_syms__free(ev.syms);
	hs_profile__free(ev.prof);
	hs_window__free(ev.win);
	heapscope_bpf__destroy(skel);
	return err;
}

int main(int argc, char **argv)
{
	struct hs_options opts = {.value = HS_VALUE_INUSE};
	struct sigaction sa = {.sa_handler = on_signal};
	int err;

	/* Other subcommands have their own parsers and loops. */
	if (argc >= 2 && !strcmp(argv[1], "daemon"))
		return hs_daemon_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "rate"))
		return hs_rate_main(argc - 1, argv + 1);

	/* Parse. */
	err = parse_args(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : 2;
	verbose = opts.verbose;
	libbpf_set_print(libbpf_print);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	err = record(&opts);
	return err ? 1 : 0;
}
