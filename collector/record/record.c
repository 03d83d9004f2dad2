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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach.h"
#include "cli.h"
#include "clock.h"
#include "heapscope_event.h"
#include "record.h"
#include "ring.h"

static volatile sig_atomic_t exiting;
static bool verbose;

void hs_record__on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* Registry records sampled before the attach join the live set. */
static void read_registry(const struct hs_target *t, struct hs_events *ev)
{
	struct hs_registry_load ld;
	int err = hs_events__load_registry(ev, t, &ld);

	if (err && !ld.addr) {
		fprintf(stderr,
			"heapscope: warning: no %s symbol in %s (%s); samples "
			"taken before the attach are missing\n",
			HEAPSCOPE_REGISTRY_SYMBOL, t->path, strerror(-err));
		return;
	}
	if (err) {
		fprintf(stderr,
			"heapscope: warning: cannot read the registry at "
			"0x%llx: %s; samples taken before the attach are "
			"missing\n",
			(unsigned long long)ld.addr,
			err == -EBADMSG	 ? "invalid contents"
			: err == -EAGAIN ? "never stable (busy writer)"
					 : strerror(-err));
		return;
	}
	if (verbose || ld.invalid)
		fprintf(stderr,
			"heapscope: registry: %zu live records (%zu new), %llu "
			"invalid, %u retries%s\n",
			ld.records, ld.added, (unsigned long long)ld.invalid,
			ld.retries, ld.per_record ? ", per-record copy" : "");
}

int hs_record__run(const struct hs_options *o, const struct hs_record_hooks *h)
{
	struct heapscope_bpf *skel = NULL;
	struct hs_ring ring = {0};
	struct hs_folded_line *lines = NULL;
	struct hs_stack_agg *aggs = NULL;
	struct hs_syms *syms = NULL;
	struct hs_events ev = {.pid = o->pid, .verbose = o->verbose};
	struct hs_target t;
	struct hs_proc_info pi;
	uint64_t lost[HS_LOST_NR] = {0}, start_ns = hs_wall_ns();
	size_t naggs = 0, nlines = 0;
	uint64_t deadline = 0, attach_ns, next_progress;
	bool tty = isatty(STDERR_FILENO), progress_shown = false;
	uint8_t one = 1;
	uint32_t key = o->pid;
	struct hs_options eff = *o;
	const char *cmd = h && h->cmd ? h->cmd : "record";
	struct bpf_link *links[HS_ATTACH_MAX_PROBES];
	const char *what, *hint, *failed;
	size_t nlinks = 0;
	int err, terr;

	/* The folded value when --value was not given depends on --profile. */
	if (!eff.value_set)
		eff.value = hs_profile_kind__default_value(o->profile);
	o = &eff;

	/* Check: everything that can fail cheaply, before touching BPF. */
	if (geteuid() != 0) {
		fprintf(stderr,
			"heapscope %s: must run as root (BPF and USDT "
			"attach need CAP_BPF, CAP_PERFMON and "
			"CAP_SYS_PTRACE)\n",
			cmd);
		return -EPERM;
	}
	if (!hs_proc__alive(o->pid)) {
		fprintf(stderr,
			"heapscope %s: no process %d (it has exited, or "
			"the pid is wrong)\n",
			cmd, o->pid);
		return -ESRCH;
	}
	err = hs_target__find_provider(&t, o->pid, o->lib, o->provider);
	if (err == -ENOENT && (o->provider == HS_PROVIDER_OTEL ||
			       o->provider == HS_PROVIDER_DDHEAP)) {
		fprintf(stderr,
			"heapscope %s: process %d maps no object%s%s with "
			"the %s:alloc probe\n",
			cmd, o->pid, o->lib ? " matching " : "",
			o->lib ? o->lib : "", hs_provider_name(o->provider));
		return err;
	} else if (err == -ENOENT) {
		fprintf(stderr,
			"heapscope %s: process %d does not use "
			"libheapscope%s%s "
			"(not in /proc/%d/maps; preload libheapscope.so or "
			"pass --lib), nor fires otel_memory or ddheap probes\n",
			cmd, o->pid, o->lib ? " matching " : "",
			o->lib ? o->lib : "", o->pid);
		return err;
	} else if (err) {
		fprintf(stderr, "heapscope %s: cannot inspect process %d: %s\n",
			cmd, o->pid, strerror(-err));
		return err;
	}
	hs_output_force = o->force;
	err = hs_output__check(o->output);
	if (err) {
		fprintf(stderr, "heapscope %s: cannot write %s: %s%s\n", cmd,
			o->output, strerror(-err),
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
	err = hs_bpf__open_load(&skel, &what, &hint);
	if (err) {
		fprintf(stderr, "heapscope: BPF not available: cannot %s: %s%s\n",
			what, strerror(-err), hint);
		return err;
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
	err = hs_attach__usdt(skel, t.pid, t.open_path, t.provider, t.notes,
			      links, &nlinks, &failed);
	if (err) {
		fprintf(stderr, "heapscope: cannot attach to %s:%s in %s: %s\n",
			hs_provider_name(t.provider), failed, t.path,
			strerror(-err));
		fprintf(stderr,
			"heapscope: cannot attach to %s in process %d: %s\n",
			t.path, o->pid, strerror(-err));
		goto cleanup;
	}
	/* Exit/exec notices are a convenience: the loop also polls
	 * kill(pid, 0), so a kernel without them only reacts later. */
	terr = hs_attach__tracepoints(skel);
	if (terr)
		fprintf(stderr,
			"heapscope: warning: no exit/exec tracepoints (%s); "
			"polling the process instead\n",
			strerror(-terr));
	err = hs_ring__open(&ring, bpf_map__fd(skel->maps.events),
			    hs_events__handle, &ev);
	if (err) {
		fprintf(stderr,
			"heapscope: cannot create the ring buffer: %s\n",
			strerror(-err));
		goto cleanup;
	}
	hs_proc__info(o->pid, &pi);
	syms = hs_syms__new(o->pid);
	hs_syms__set_raw(syms, o->raw_symbols);
	ev.hint = hs_syms__hint;
	ev.hint_ctx = syms;
	if (!syms)
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
	hs_record__print_attached(o, t.path);

	/* Loop until the duration, a signal, or the target's end. */
	attach_ns = hs_mono_ns();
	next_progress = attach_ns + HS_NS_PER_S;
	if (o->duration_s)
		deadline = attach_ns + o->duration_s * HS_NS_PER_S;
	while (!exiting) {
		uint64_t now = hs_mono_ns();

		if (h && h->tick) {
			err = h->tick(h->ctx, &ev, now);
			if (err)
				goto cleanup;
		}

		/* a terminal gets a progress line, at most once a second */
		if (tty && now >= next_progress) {
			hs_lost__read(bpf_map__fd(skel->maps.lost), lost);
			hs_record__print_progress(&ev, now - attach_ns, lost,
						  hs_profile__seq_lost(ev.prof));
			progress_shown = true;
			next_progress = now + HS_NS_PER_S;
		}
		err = hs_ring__poll(&ring, 100);
		/* The BPF side wakes us only when the ring buffer fills up
		 * (heapscope.bpf.c submit): after a quiet poll, take what
		 * is there. */
		if (err == 0)
			err = hs_ring__consume(&ring);
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
		hs_syms__tick(syms);
		if (ev.exited || ev.execed || !hs_proc__alive(o->pid))
			break;
		if (deadline && hs_mono_ns() >= deadline)
			break;
	}
	if (progress_shown)
		fputc('\n', stderr);
	/* What is in the ring buffer when the loop ends, bounded to one
	 * second so a target that keeps allocating cannot hold the exit. */
	hs_ring__drain(&ring, HS_NS_PER_S);
	if (ev.execed)
		fprintf(stderr,
			"heapscope: process %d called exec; profile as of "
			"before the exec\n",
			o->pid);
	else if (ev.exited || !hs_proc__alive(o->pid))
		fprintf(stderr,
			"heapscope: process %d exited%s; profile as of its "
			"exit\n",
			o->pid, ev.exited ? "" : " (seen by polling)");

	/* Report: another command's own, or the profile. */
	hs_syms__sync(syms);
	if (h && h->report) {
		err = h->report(h->ctx, o, &ev, syms);
		goto cleanup;
	}
	if ((o->profile == HS_PROFILE_HEAP ||
	     o->profile == HS_PROFILE_FRAGMENTATION) &&
	    !ev.exited && hs_proc__alive(o->pid)) {
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
	err = hs_profiles__aggregate(o->profile, ev.prof, ev.win, &aggs, &naggs);
	if (!err)
		err = hs_folded__build(aggs, naggs, o->value, hs_window__sym,
				       syms, &lines, &nlines);
	if (err) {
		fprintf(stderr, "heapscope: cannot build the profile: %s\n",
			strerror(-err));
		goto cleanup;
	}
	hs_lost__read(bpf_map__fd(skel->maps.lost), lost);
	err = hs_record__write_report(o, &t, &pi, &ev, syms, aggs, naggs,
				      lines, nlines, lost, start_ns);
	if (err) {
		fprintf(stderr, "heapscope: cannot write %s: %s\n",
			o->output ? o->output : "stdout", strerror(-err));
		goto cleanup;
	}
	if (o->verbose)
		fprintf(stderr, "heapscope: maps snapshot refreshed %u times\n",
			hs_syms__refreshes(syms));
	hs_record__print_summary(o, &ev, lines, nlines, lost,
				 hs_profile__seq_lost(ev.prof));

cleanup:
	hs_folded__free(lines, nlines);
	free(aggs);
	hs_ring__close(&ring);
	hs_syms__free(syms);
	hs_profile__free(ev.prof);
	hs_window__free(ev.win);
	while (nlinks)
		bpf_link__destroy(links[--nlinks]);
	heapscope_bpf__destroy(skel);
	return err;
}

int hs_record_main(int argc, char **argv)
{
	struct hs_options opts = {.value = HS_VALUE_INUSE};
	struct sigaction sa = {.sa_handler = hs_record__on_signal};
	int err;

	/* Parse. */
	err = hs_record__parse_args(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : HS_EXIT_USAGE;
	verbose = opts.verbose;
	hs_libbpf__print(opts.verbose);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	err = hs_record__run(&opts, NULL);
	return err ? 1 : 0;
}
