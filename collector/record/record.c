// SPDX-License-Identifier: MIT
/*
 * record.c - `heapscope record`: attach to a process's heapscope probes, read
 * its registry of live samples, follow allocations and frees through the
 * BPF ring buffer, and write the heap profile as folded stacks.
 *
 * hs_record_main reads as phases: parse (options.c), check, open,
 * configure, load, attach, read the registry, loop, report
 * (record_report.c), clean up.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach.h"
#include "clock.h"
#include "heapscope.h"
#include "heapscope_event.h"
#include "record.h"

static volatile sig_atomic_t exiting;
static bool verbose;

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
	uint64_t t0 = hs_mono_ns();

	do {
		batch_left = EVENT_BATCH;
		if (ring_buffer__consume(rb) != -EAGAIN)
			return;
	} while (hs_mono_ns() - t0 < HS_NS_PER_S);
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

static int record(const struct hs_options *o)
{
	struct heapscope_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct hs_folded_line *lines = NULL;
	struct hs_stack_agg *aggs = NULL;
	struct hs_events ev = {.pid = o->pid, .verbose = o->verbose};
	struct hs_target t;
	struct hs_proc_info pi;
	uint64_t lost[HS_LOST_NR], start_ns = hs_wall_ns();
	size_t naggs = 0, nlines = 0;
	uint64_t deadline = 0;
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
	err = hs_target__find_provider(&t, o->pid, o->lib, o->provider);
	if (err == -ENOENT && (o->provider == HS_PROVIDER_OTEL ||
			       o->provider == HS_PROVIDER_DDHEAP)) {
		fprintf(stderr,
			"heapscope: process %d maps no object%s%s with probe %s:alloc "
			"probe\n",
			o->pid, o->lib ? " matching " : "", o->lib ? o->lib : "",
			hs_provider_name(o->provider));
		return err;
	} else if (err == -ENOENT) {
		fprintf(stderr,
			"heapscope: process %d does not use libheapscope%s%s "
			"(not in /proc/%d/maps; preload libheapscope.so or "
			"pass --lib), nor fires otel_memory or ddheap probes\n",
			o->pid, o->lib ? " matching " : "",
			o->lib ? o->lib : "", o->pid);
		return err;
	} else if (err) {
		fprintf(stderr, "heapscope: cannot inspect process %d: %s\n",
			o->pid, strerror(-err));
		return err;
	}
	hs_output_force = o->force;
	err = hs_output__check(o->output);
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
	ev.win = hs_window__new(hs_mono_ns());
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
	/* Compatible probes have no registry: samples after the attach only. */
	if (t.provider == HS_PROVIDER_HEAPSCOPE)
		read_registry(&t, &ev);
	hs_window__loading(ev.win, false);
	hs_window__peak_check(ev.win, ev.prof);
	if (t.provider != HS_PROVIDER_HEAPSCOPE)
		fprintf(stderr,
			"heapscope: reading %s probes of %s%s (no registry: "
			"only allocations sampled from now on)\n",
			hs_provider_name(t.provider), t.path,
			hs_notes_have_free(t.notes, t.provider) ?
				"" :
				"; it has no free probe");
	if (o->verbose)
		fprintf(stderr, "heapscope: attached to %s in process %d\n",
			t.path, o->pid);

	/* Loop until the duration, a signal, or the target's end. */
	if (o->duration_s)
		deadline = hs_mono_ns() + o->duration_s * HS_NS_PER_S;
	while (!exiting) {
		batch_left = EVENT_BATCH;
		err = ring_buffer__poll(rb, 100);
		/* The BPF side wakes us only when the ring buffer fills up
		 * (heapscope.bpf.c submit): after a quiet poll, take what
		 * is there. */
		if (err == 0) {
			batch_left = EVENT_BATCH;
			err = ring_buffer__consume(rb);
		}
		if (err == -EINTR || err == -EAGAIN) {
			err = 0;
			if (!(deadline && hs_mono_ns() >= deadline))
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
		if (deadline && hs_mono_ns() >= deadline)
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
		uint64_t raddr, fcov, funcov;
		double fub;
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
		hs_fragmentation__coverage(ev.prof, &fcov, &funcov, NULL,
					   &fub);
		if (funcov)
			fprintf(stderr,
				"heapscope: fragmentation: %llu of %llu live "
				"samples (%.0f est. bytes) have no proxy span "
				"data and are not covered (by default only "
				"size classes <= 4096 B hold a proxy; "
				"HEAPSCOPE_PROXY_MAX in the target widens "
				"it)\n",
				(unsigned long long)funcov,
				(unsigned long long)(fcov + funcov), fub);
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
	err = hs_record__write_report(o, &t, &pi, &ev, aggs, naggs, lines,
				      nlines, lost, start_ns);
	if (err) {
		fprintf(stderr, "heapscope: cannot write %s: %s\n",
			o->output ? o->output : "stdout", strerror(-err));
		goto cleanup;
	}
	if (o->verbose)
		fprintf(stderr, "heapscope: maps snapshot refreshed %u times\n",
			hs_syms__refreshes(ev.syms));
	hs_record__print_summary(o, &ev, lines, nlines, lost,
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

int hs_record_main(int argc, char **argv)
{
	struct hs_options opts = {.value = HS_VALUE_INUSE};
	struct sigaction sa = {.sa_handler = on_signal};
	int err;

	/* Parse. */
	err = hs_record__parse_args(argc, argv, &opts);
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
