/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - `heapscope daemon`: the per-process table shared by the main
 * thread (ring buffer, sweeps: daemon.c; SIGHUP dumps: daemon_signals.c;
 * leak-trend points: daemon_leaks.c) and libmicrohttpd's connection
 * threads (http.c, http_profiles.c, http_host.c, http_metrics.c,
 * http_leaks.c).  Every field of struct hs_daemon and of every struct
 * hs_proc is protected by hs_daemon.lock.
 */
#ifndef HS_DAEMON_H
#define HS_DAEMON_H

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "events.h"
#include "export.h"
#include "heapscope_event.h"
#include "oom.h"
#include "symbolize.h"
#include "target.h"

struct hs_ring;

#define HS_DAEMON_BUCKETS 1024
#define HS_DAEMON_MAX_LIBS 16
#define HS_DAEMON_MAX_OBJS 64
#define HS_DAEMON_MAX_LISTEN 4 /* --listen addresses */
#define HS_TOKEN_MAX 4096      /* bytes of a --token-file token */

/* One --listen address: TCP (AF_INET, AF_INET6) or a unix socket path
 * (AF_UNIX, from "unix:PATH"). */
struct hs_listen {
	struct sockaddr_storage addr;
	socklen_t len;
	char text[128]; /* as given, e.g. "127.0.0.1:6060", "unix:/run/x" */
};

/* An /debug/pprof/allocs window: the allocs seen for one pid while an
 * HTTP request waits.  Owned by the request; the process only links it. */
struct hs_scrape_window {
	struct hs_profile *prof; /* allocs only, frees not applied */
	struct hs_scrape_window *next;
	bool dead;		 /* the process exited or exec'd */
	struct hs_proc *proc;	 /* NULL once dead */
};

/*
 * A process's symbols, shared by the process entry and scrapes in flight:
 * symbolizing (slow: DWARF line tables) holds only `lock`, never the
 * daemon lock, so the ring buffer keeps draining and /metrics answers.
 * refs is changed under the daemon lock; the last put frees it.  The main
 * thread only try-locks it (maps refresh hints), never waits.
 */
struct hs_symref {
	pthread_mutex_t lock;
	struct hs_syms *syms; /* may be NULL */
	unsigned refs;
};

struct hs_proc {
	pid_t pid;
	uint64_t start_time; /* with pid: the process's identity */
	struct hs_proc_info info;
	struct hs_events ev; /* prof, counters; its hint is sym's */
	struct hs_symref *sym;
	struct hs_target t;  /* object with the probes, "" if unknown */
	uint64_t reg_addr;   /* registry address, 0 = unknown */
	int64_t reg_period;  /* from the registry at attach */
	uint64_t created_ns; /* CLOCK_REALTIME */
	bool gone;	     /* seen dead; freed at the next sweep */
	struct hs_scrape_window *windows;
	/* allocations since followed, per stack (ev.totals points here) */
	struct hs_stack_table totals;
	/* leak trends (daemon_leaks.c), NULL until the first point */
	struct hs_leaks *leaks;
	struct hs_proc *next; /* hash chain */
};

struct hs_daemon {
	pthread_mutex_t lock;
	struct hs_proc *buckets[HS_DAEMON_BUCKETS];
	size_t nprocs;
	/* options */
	const char *libs[HS_DAEMON_MAX_LIBS];
	size_t nlibs;
	/* --provider (default auto); per --lib, the probes chosen for it at
	 * attach (never AUTO once attached) */
	enum hs_provider provider;
	enum hs_provider lib_provider[HS_DAEMON_MAX_LIBS];
	struct hs_listen listen[HS_DAEMON_MAX_LISTEN];
	size_t nlisten;
	bool allow_remote;
	/* --token-file: the bearer token TCP requests must carry
	 * (token_len 0: none; unix-socket requests are checked by their
	 * peer's uid instead, http_access.c) */
	char token[HS_TOKEN_MAX + 1];
	size_t token_len;
	bool no_copies; /* --no-copies: ignore other copies of the objects */
	bool raw_symbols; /* --symbolize=none: addresses and mappings only */
	const char *dump_dir;
	uint64_t leak_interval_ns; /* --leak-interval, 0: no leak trends */
	size_t leak_cursor;	   /* bucket the next leak points start at */
	bool verbose;
	/* BPF side (opaque here: struct heapscope_bpf *, struct bpf_link *) */
	void *skel;
	struct hs_ring *ring; /* see hs_daemon__drain; NULL until it runs */
	int tracked_fd;	 /* tracked_pids map */
	int lost_pid_fd; /* lost_by_pid map: ring-buffer drops per pid */
	/* Objects with probes attached for every process, by inode: --lib
	 * and other copies found in processes (containers' own images). */
	struct hs_attached_obj {
		dev_t dev;
		ino_t ino;
		enum hs_provider provider; /* whose probes are attached */
	} objs[HS_DAEMON_MAX_OBJS];
	size_t nobjs;
	void *links[HS_DAEMON_MAX_OBJS * HS_ATTACH_MAX_PROBES];
	size_t nlinks;
	/* counters */
	uint64_t allocs, frees, bad, procs_seen, procs_freed;
	uint64_t lost[HS_LOST_NR]; /* HS_LOST_* totals, refreshed by the main
				    * thread */
	uint64_t http_requests, scrape_errors;
	/* 503 answers to connections over the limit (http_server.c): atomic
	 * (__atomic builtins), never under the lock, so an overload is
	 * answered while a dump holds the lock */
	uint64_t http_busy;
	uint64_t dumps, dump_errors;
	volatile sig_atomic_t *exiting;
	/* pre-OOM capture: options, watch, snapshots (oom.h; own lock) */
	struct hs_oom oom;
};

/* Consumes the events waiting in the ring buffer (the BPF side does not
 * wake the daemon for each one), at most ~100 ms of them.  Call with
 * d->lock held before taking a snapshot, so a profile includes every
 * event fired before the request.  No-op before the ring buffer exists. */
void hs_daemon__drain(struct hs_daemon *d);

/* Find the process (by host pid); NULL if unknown. */
struct hs_proc *hs_daemon__find(struct hs_daemon *d, pid_t pid);
/* Find, or start following a live process that maps one of the --lib
 * objects (reads its registry).  -ESRCH: no such process; -ENOENT: it does
 * not use heapscope. */
int hs_daemon__get(struct hs_daemon *d, pid_t pid, struct hs_proc **out);
/* What a profile needs, copied out of the shared state. */
struct hs_snapshot {
	struct hs_stack_agg *aggs;
	size_t naggs;
	struct hs_symref *sym; /* a reference */
	struct hs_proc_info info;
	char comments[HS_REPORT_MAX_NOTES][HS_REPORT_NOTE_LEN];
	const char *cptr[HS_REPORT_MAX_NOTES];
	struct hs_pprof_meta meta;
	enum hs_value value; /* folded / text value (0: inuse) */
	/* labels parsed from info.cgroup ("" if none; meta points here) */
	char container_id[HS_CONTAINER_ID_LEN + 1], unit[256];
};

/*
 * Under the daemon lock: copy one process's heap (or window w's allocs).
 * The heap (w NULL) carries Go's four sample types: inuse from the live
 * samples, alloc from p->totals (allocations since followed).
 */
int hs_daemon__snapshot(struct hs_daemon *d, struct hs_proc *p,
			struct hs_scrape_window *w, uint64_t start_ns,
			struct hs_snapshot *snap);
/* Without the daemon lock: symbolize and encode as fmt; *out malloc'd. */
int hs_daemon__render(struct hs_snapshot *snap, enum hs_format fmt,
		      uint8_t **out, size_t *len);
/*
 * Without the daemon lock: the host profile, snaps[0..n) rendered as one
 * profile of meta's types, time and comments (hs_render_host__*): each
 * process's samples with its labels (pprof) or under a "COMM (PID)" root
 * frame (folded, text, of value).  Takes each snapshot's symbol lock in
 * turn.  *out malloc'd; 0 or -errno.
 */
int hs_daemon__render_host(struct hs_snapshot *snaps, size_t n,
			   const struct hs_pprof_meta *meta, enum hs_value value,
			   enum hs_format fmt, uint8_t **out, size_t *len);
/* Under the daemon lock: drop the snapshot's references. */
void hs_daemon__release(struct hs_daemon *d, struct hs_snapshot *snap);
/* Ring-buffer events of pid dropped in BPF (thread-safe: a map read). */
uint64_t hs_daemon__lost(const struct hs_daemon *d, pid_t pid);
/* Estimated in-use bytes of a process (sum of a*W/(r+1)). */
double hs_daemon__inuse(const struct hs_proc *p);

/* proctable.c: start following pid (t: its object, NULL = look it up);
 * a process already gone still gets an entry, freed by the next sweep.
 * NULL only on ENOMEM. */
struct hs_proc *hs_daemon__follow(struct hs_daemon *d, pid_t pid,
				  const struct hs_target *t);
/* Forget p: its windows are marked dead, its state freed. */
void hs_daemon__forget(struct hs_daemon *d, struct hs_proc *p);
/* Forget processes that are gone or whose pid was reused. */
void hs_daemon__sweep(struct hs_daemon *d);
/* Follow the running processes that map one of the objects. */
void hs_daemon__scan(struct hs_daemon *d);
/* A maps-refresh hint for sampled addresses; skipped (never waits) while
 * a scrape symbolizes the process. */
void hs_symref__check(struct hs_symref *r, const uint64_t *a, size_t n);

/* daemon.c: attach the probes of provider p (AUTO: heapscope's if the
 * object's notes have them, else otel_memory, else ddheap) for every
 * process to the object at path, once per inode (a container's own copy
 * included).  0 (*chosen, if not NULL: the provider attached, or the one
 * attached earlier to that inode) or -errno after a message on stderr;
 * -ENOENT: the object has no alloc probe of p. */
int hs_daemon__attach_object(struct hs_daemon *d, const char *path,
			     enum hs_provider p, enum hs_provider *chosen);

/* daemon_leaks.c: a leak-trend point (hs_leaks__tick) for each followed
 * process whose interval has passed, its store made at the first; at
 * most ~10 ms of them per call (the rest at the next call, from where
 * this one stopped).  Under the daemon lock, main thread. */
void hs_daemon__leak_points(struct hs_daemon *d);

/* daemon_options.c: the `daemon` command line (argv[0] is "daemon") into
 * d, zeroed by the caller; checks --listen, --lib, --dump-dir and reads
 * --token-file.  Returns 0; 1 when the help was printed (exit 0); -EINVAL
 * after a one-line message and the --help hint on stderr.  Main thread,
 * before any other starts. */
int hs_daemon__parse_args(int argc, char **argv, struct hs_daemon *d);

/* daemon_signals.c: point d->exiting at the flag SIGINT/SIGTERM set, make
 * SIGHUP request a dump, ignore SIGPIPE.  Main thread, before the HTTP
 * server starts. */
void hs_daemon__signals(struct hs_daemon *d);
/* Has SIGHUP come since the last call?  Clears the request.  Main thread. */
bool hs_daemon__dump_requested(void);
/* Write every followed process's heap profile (pprof) to
 * --dump-dir/heap-PID-STARTTIME.pb.gz, each atomically (temp file +
 * rename); counts d->dumps / d->dump_errors, reports failures on stderr.
 * Without --dump-dir only says that SIGHUP is ignored.  Under the daemon
 * lock, main thread (symbolizes: slow). */
void hs_daemon__dump_all(struct hs_daemon *d);

/* http_server.c: listen on every d->listen address (unix sockets made
 * mode 0666: their peers are checked by uid) and serve (MHD, a thread
 * per connection).  0 and *out, or -errno after a message on stderr
 * naming the address.  Stop closes every connection and removes the
 * unix sockets; NULL is a no-op. */
int hs_http__start(struct hs_daemon *d, void **out);
void hs_http__stop(void *h);

#endif /* HS_DAEMON_H */
