// SPDX-License-Identifier: MIT
/*
 * daemon.c - `heapscope daemon`: system-wide heap profiling.
 *
 * The USDT programs are attached by object path for every process (pid
 * -1), so processes started later are covered without a per-process
 * command; processes already running are found by scanning /proc/PID/maps
 * and their samples taken before the attach are read from their registry.
 * An object without heapscope's probes but with the compatible
 * otel_memory (else ddheap) alloc/free pair gets those attached instead
 * (--provider); its processes have no registry, their events are matched
 * by pointer (events.c).
 * Per-process state (struct hs_proc) is created at the first sight of a
 * pid, identified by pid + start time (a reused pid is a new process),
 * dropped on the exit event (or a sweep that finds the pid gone or
 * reused) and on exec (the next event of the new image starts afresh).
 *
 * Threads: the main thread consumes the BPF ring buffer, sweeps and dumps;
 * libmicrohttpd runs one thread per HTTP connection (http.c).  Everything
 * shared sits behind one mutex, taken by the main thread per ring-buffer
 * batch (never while it waits for events) and by a handler while it copies
 * a process's aggregated stacks; symbolizing them happens outside it,
 * under the process's own symbol lock (proctable.c).
 *
 * hs_daemon_main reads as phases: parse (daemon_options.c), check, open,
 * load, attach, scan, serve, loop, clean up.  Signals and SIGHUP dumps:
 * daemon_signals.c.  Pre-OOM capture (a thread of its own; OOM kills
 * arrive here as HS_EV_OOM events): pressure.c, oom_store.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach.h"
#include "cli.h"
#include "clock.h"
#include "daemon.h"
#include "heapscope.skel.h"
#include "heapscope_event.h"
#include "ring.h"

#define RESCAN_MS 10000 /* /proc rescan for copies not attached yet */

/* ------------------------------------------------------------ events */

static void window_add(struct hs_proc *p, const struct hs_event *e)
{
	/* Compatible probes carry no record id; a window applies no frees,
	 * so a reused pointer is a new sample: made-up ids (the live set's
	 * own start at 2^63 as well, in another profile). */
	static uint64_t compat_ids;
	struct hs_sample s;

	hs_sample__from_event(&s, e);
	if (s.flags & HS_SAMPLE_COMPAT)
		s.seq = HS_COMPAT_SEQ_BASE + ++compat_ids;
	for (struct hs_scrape_window *w = p->windows; w; w = w->next)
		hs_profile__alloc(w->prof, &s);
}

void hs_daemon__drain(struct hs_daemon *d)
{
	hs_ring__drain(d->ring, 100 * HS_NS_PER_MS);
}

/* One ring-buffer record, under the daemon lock (one batch of
 * HS_RING_BATCH per hold, so HTTP handlers never wait long for it). */
static int on_event(void *ctx, void *data, size_t size)
{
	struct hs_daemon *d = ctx;
	const struct hs_event *e = data;
	struct hs_proc *p;

	if (!hs_event__valid(data, size) || !e->pid || e->pid > INT32_MAX) {
		d->bad++;
		return 0;
	}
	p = hs_daemon__find(d, (pid_t)e->pid);
	if (e->type == HS_EV_OOM) {
		hs_oom__on_kill(d, p, e); /* oom_store.c */
		return 0;
	}
	if (e->type == HS_EV_EXIT || e->type == HS_EV_EXEC) {
		/* After exec the image is new: the next event starts a
		 * fresh entry (registry, maps, symbols). */
		if (p)
			hs_daemon__forget(d, p);
		return 0;
	}
	if (!p) {
		p = hs_daemon__follow(d, (pid_t)e->pid, NULL);
		if (!p)
			return 0;
	}
	if (e->type == HS_EV_ALLOC) {
		d->allocs++;
		if (p->windows)
			window_add(p, e);
	} else if (e->type == HS_EV_FREE) {
		d->frees++;
	}
	return hs_events__handle(&p->ev, data, size);
}

/* ------------------------------------------------------------ main */

/*
 * Attach the USDT programs for every process (pid -1) to the object at
 * path, once per inode: uprobes live on the inode, so a container's own
 * copy of the library (reached through /proc/PID/root) needs its own.
 * Which probes: hs_notes__choose; how: hs_attach__usdt.
 */
int hs_daemon__attach_object(struct hs_daemon *d, const char *path,
			     enum hs_provider p, enum hs_provider *chosen)
{
	const char *failed;
	enum hs_provider use;
	size_t nlinks;
	unsigned notes;
	struct stat st;
	int err;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < d->nobjs; i++)
		if (d->objs[i].dev == st.st_dev &&
		    d->objs[i].ino == st.st_ino) {
			if (chosen)
				*chosen = d->objs[i].provider;
			return 0;
		}
	if (d->nobjs == HS_DAEMON_MAX_OBJS)
		return -ENOSPC;
	notes = hs_elf_probe_notes(path);
	use = hs_notes__choose(notes, p);
	if (use == HS_PROVIDER_AUTO) {
		if (p == HS_PROVIDER_AUTO)
			fprintf(stderr,
				"heapscope daemon: %s has no heapscope, "
				"otel_memory or ddheap alloc probe\n",
				path);
		else
			fprintf(stderr,
				"heapscope daemon: %s has no %s:%s probe\n",
				path, hs_provider_name(p),
				p == HS_PROVIDER_HEAPSCOPE ? "sample_alloc" :
							     "alloc");
		return -ENOENT;
	}
	err = hs_attach__usdt(d->skel, -1, path, use, notes,
			      (struct bpf_link **)d->links + d->nlinks, &nlinks,
			      &failed);
	if (err) {
		fprintf(stderr,
			"heapscope daemon: cannot attach to %s:%s in %s: %s\n",
			hs_provider_name(use), failed, path, strerror(-err));
		return err;
	}
	d->nlinks += nlinks;
	d->objs[d->nobjs].dev = st.st_dev;
	d->objs[d->nobjs].ino = st.st_ino;
	d->objs[d->nobjs++].provider = use;
	if (chosen)
		*chosen = use;
	if (d->verbose || use != HS_PROVIDER_HEAPSCOPE)
		fprintf(stderr, "heapscope daemon: attached to %s probes in "
				"%s%s\n",
			hs_provider_name(use), path,
			use == HS_PROVIDER_HEAPSCOPE ?
				"" :
				" (no registry: its processes' allocations "
				"before this attach are not in their "
				"profiles)");
	return 0;
}

static int attach_all(struct hs_daemon *d, struct heapscope_bpf *skel)
{
	for (size_t l = 0; l < d->nlibs; l++) {
		int err = hs_daemon__attach_object(d, d->libs[l], d->provider,
						   &d->lib_provider[l]);

		if (err)
			return err;
	}
	if (hs_attach__tracepoints(skel))
		fprintf(stderr, "heapscope daemon: warning: no exit/exec "
				"tracepoints; exits are seen by sweeps\n");
	return 0;
}

/* "listening on http://ADDR, unix:PATH, N processes already running",
 * and what an address without a token lets every local user do. */
static void print_listening(const struct hs_daemon *d)
{
	bool open_tcp = false;

	fputs("heapscope daemon: listening on", stderr);
	for (size_t i = 0; i < d->nlisten; i++) {
		bool is_unix = d->listen[i].addr.ss_family == AF_UNIX;

		fprintf(stderr, "%s %s%s", i ? "," : "",
			is_unix ? "" : "http://", d->listen[i].text);
		open_tcp |= !is_unix && !d->token_len;
	}
	fprintf(stderr, ", %zu processes already running\n", d->nprocs);
	if (open_tcp)
		fprintf(stderr,
			"heapscope daemon: note: without --token-file any "
			"local user can read every process's profile over "
			"TCP; --listen unix:PATH checks who asks\n");
}

int hs_daemon_main(int argc, char **argv)
{
	static struct hs_daemon d;
	struct heapscope_bpf *skel = NULL;
	struct hs_ring ring = {0};
	const char *what, *hint;
	void *http = NULL;
	uint64_t last_sweep = 0, last_scan = hs_mono_ns();
	int err, epfd;

	/* Parse, check. */
	err = hs_daemon__parse_args(argc, argv, &d);
	if (err)
		return err > 0 ? 0 : HS_EXIT_USAGE;
	hs_libbpf__print(d.verbose);
	if (geteuid() != 0) {
		fprintf(stderr, "heapscope daemon: must run as root (BPF, "
				"USDT attach and process_vm_readv need "
				"CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE)\n");
		return HS_EXIT_FAIL;
	}
	pthread_mutex_init(&d.lock, NULL);
	hs_daemon__signals(&d);

	/* Open, load. */
	err = hs_bpf__open_load(&skel, &what, &hint);
	if (err) {
		fprintf(stderr, "heapscope daemon: cannot %s: %s%s\n", what,
			strerror(-err), hint);
		return HS_EXIT_FAIL;
	}
	d.skel = skel;
	d.tracked_fd = bpf_map__fd(skel->maps.tracked_pids);
	d.lost_pid_fd = bpf_map__fd(skel->maps.lost_by_pid);
	err = hs_ring__open(&ring, bpf_map__fd(skel->maps.events), on_event,
			    &d);
	d.ring = err ? NULL : &ring;
	if (err) {
		fprintf(stderr, "heapscope daemon: cannot create the ring "
				"buffer\n");
		goto cleanup;
	}

	/* Attach (every process), then scan the running ones: a sample is
	 * in the registry, in the ring buffer, or both (deduplicated). */
	err = attach_all(&d, skel);
	if (err)
		goto cleanup;
	pthread_mutex_lock(&d.lock);
	hs_daemon__scan(&d);
	pthread_mutex_unlock(&d.lock);

	/* Serve. */
	err = hs_http__start(&d, &http);
	if (err)
		goto cleanup;
	print_listening(&d);
	/* the pressure watch (pressure.c): failing to start it is reported,
	 * the profiles are still served */
	hs_oom__start(&d);

	/* Loop: wait for events without the lock, consume with it. */
	epfd = hs_ring__epoll_fd(&ring);
	while (!*d.exiting) {
		struct epoll_event evs[1];
		int n = epoll_wait(epfd, evs, 1, 200);

		if (n < 0 && errno != EINTR) {
			err = -errno;
			fprintf(stderr, "heapscope daemon: epoll: %s\n",
				strerror(errno));
			break;
		}
		pthread_mutex_lock(&d.lock);
		hs_ring__consume(&ring);
		if (hs_mono_ns() - last_sweep >= HS_NS_PER_S) {
			hs_lost__read(bpf_map__fd(skel->maps.lost), d.lost);
			hs_daemon__sweep(&d);
			last_sweep = hs_mono_ns();
		}
		/* New processes mapping an object not attached yet (another
		 * copy) fire no events: find them by a slow rescan. */
		if (hs_mono_ns() - last_scan >= RESCAN_MS * HS_NS_PER_MS) {
			hs_daemon__scan(&d);
			last_scan = hs_mono_ns();
		}
		hs_daemon__leak_points(&d);
		if (hs_daemon__dump_requested()) {
			hs_lost__read(bpf_map__fd(skel->maps.lost), d.lost);
			hs_daemon__dump_all(&d);
		}
		pthread_mutex_unlock(&d.lock);
	}
	fprintf(stderr, "heapscope daemon: shutting down (%llu events, %zu "
			"processes followed)\n",
		(unsigned long long)(d.allocs + d.frees), d.nprocs);
	err = 0;

cleanup:
	hs_oom__stop(&d);
	hs_http__stop(http);
	for (size_t i = 0; i < d.nlinks; i++)
		bpf_link__destroy(d.links[i]);
	d.ring = NULL; /* the HTTP threads are stopped */
	hs_ring__close(&ring);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		while (d.buckets[b])
			hs_daemon__forget(&d, d.buckets[b]);
	heapscope_bpf__destroy(skel);
	return err ? 1 : 0;
}
