/* SPDX-License-Identifier: MIT */
/*
 * oom.h - the daemon's pre-OOM capture (issue 18 item 3) across its
 * files:
 *
 *   pressure.c   the watch: each followed process's memory cgroup usage
 *                against the tightest limit above it (read by
 *                target/memcg.c), PSI (the system's /proc/pressure/memory
 *                trigger, memory.pressure per cgroup v2); the thread that
 *                wakes on them; the --oom-* options
 *   oom_pick.c   which process a PSI wake-up snapshots (the rule alone)
 *   oom_store.c  a snapshot (heap profile with residency, RSS table) and
 *                the bounded store of them, their --dump-dir files, the
 *                OOM killer's victims (oom/mark_victim events)
 *   http_oom.c   /debug/heapscope/oom and /debug/heapscope/oom/ID.pb.gz
 *
 * Locks: the store has its own mutex (struct hs_oom.lock), taken after
 * the daemon lock when both are held, never before it.
 */
#ifndef HS_OOM_H
#define HS_OOM_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "target.h" /* struct hs_memcg */

struct hs_daemon;
struct hs_proc;
struct hs_event;

/* Defaults, and what the options accept. */
#define HS_OOM_THRESHOLD 0.8 /* of the limit */
#define HS_OOM_COOLDOWN_S 10 /* per process */
#define HS_OOM_KEEP 16	     /* snapshots kept */
#define HS_OOM_KEEP_MAX 1024
#define HS_OOM_BYTES_MAX (64u << 20) /* bytes of profiles kept, all told */
#define HS_OOM_INTERVAL_MS 100	     /* usage check period */
#define HS_OOM_WATCH_MAX 1024	     /* processes checked per period */
/* PSI: "some" stall of 200 ms within 2 s wakes the watch (system
 * trigger; windows that are not a multiple of 2 s need CAP_SYS_RESOURCE,
 * which a daemon in a container may lack); a cgroup v2's memory.pressure
 * some avg10 of 10 % counts. */
#define HS_OOM_PSI_TRIGGER "some 200000 2000000"
#define HS_OOM_PSI_AVG10 10.0
/* When the system trigger fires, a process whose cgroup uses at least
 * this fraction of its limit is captured rather than the largest heap. */
#define HS_OOM_PSI_NEAR_LIMIT 0.5

enum hs_oom_reason {
	HS_OOM_CGROUP_LIMIT = 0, /* usage >= threshold * limit */
	HS_OOM_PSI = 1,		 /* memory pressure stalls */
	HS_OOM_KILL = 2,	 /* the OOM killer chose it */
};
/* "cgroup_limit", "psi", "oom_kill" */
const char *hs_oom_reason_name(enum hs_oom_reason r);

/* One snapshot.  Immutable once in the store except `victim`. */
struct hs_oom_snap {
	uint64_t id; /* 1, 2, ...: the URL's ID */
	pid_t pid;
	uint64_t start_time; /* with pid: the process's identity */
	char comm[16];
	struct hs_memcg cg;  /* its memory cgroup; version 0: none */
	uint64_t time_ns;    /* CLOCK_REALTIME of the capture */
	uint64_t capture_ns; /* how long it took (snapshot + render) */
	enum hs_oom_reason reason;
	bool victim;	       /* the OOM killer chose this process */
	bool residency;	       /* resident_space etc. were read */
	uint64_t usage, limit; /* cgroup bytes at capture; 0: unknown */
	double heap_bytes;     /* estimated in-use bytes, whole profile */
	bool owner_known;      /* owner: the uid that may read it */
	uid_t owner;
	uint8_t *pprof; /* gzip'd pprof, len bytes */
	size_t len;
	char *rss_json;		  /* the RSS table, JSON; NULL: none yet */
	char file[PATH_MAX];	  /* its --dump-dir file, "" if none */
	struct hs_oom_snap *next; /* older */
};

/* Per-process watch state (pressure.c). */
struct hs_oom_watch {
	pid_t pid;
	uint64_t start_time;
	uint64_t cg_read_ns;   /* CLOCK_MONOTONIC of the cgroup lookup */
	uint64_t last_snap_ns; /* of its last snapshot, 0: none */
	uint64_t psi_read_ns;  /* of its last memory.pressure read */
	struct hs_memcg cg;
	bool unlimited; /* no limit above cg at the last lookup */
	bool seen;	/* in this period's list */
};

struct hs_oom {
	/* options (daemon_options.c through hs_oom__option) */
	double threshold; /* 0: no watch, no snapshots */
	uint64_t cooldown_ns;
	size_t keep;
	/* the store: newest first */
	pthread_mutex_t lock;
	struct hs_oom_snap *snaps;
	size_t nsnaps, bytes;
	uint64_t next_id;
	uint64_t taken, evicted, kills, capture_errors, dump_errors;
	uint64_t taken_by[HS_OOM_KILL + 1]; /* per enum hs_oom_reason */
	/* the watch (pressure.c; its thread only, but `running`) */
	pthread_t thread;
	bool running;
	volatile bool stop;
	int psi_fd, wake_fd; /* -1: none */
	struct hs_memcg_mounts mounts;
	struct hs_oom_watch watch[HS_OOM_WATCH_MAX];
	size_t nwatch;
};

/* ---------------------------------------------------------- "pressure.c" */

/* The daemon's options: --oom-threshold F (0 < F <= 1, or 0 to turn the
 * watch off), --oom-cooldown SECONDS (0..86400), --oom-keep N
 * (1..HS_OOM_KEEP_MAX); name without the dashes.  o zeroed:
 * hs_oom__defaults first.  0 or -EINVAL (nothing printed: the caller
 * says what is accepted).  Main thread, at parse. */
void hs_oom__defaults(struct hs_oom *o);
int hs_oom__option(struct hs_oom *o, const char *name, const char *value);

/* Main thread, after the HTTP server starts: attach the oom/mark_victim
 * tracepoint (a warning if it cannot be), open the PSI trigger, start
 * the watch thread.  0 or -errno after a message.  No-op when threshold
 * is 0.  Stop joins it and frees the store; no-op if not started. */
int hs_oom__start(struct hs_daemon *d);
void hs_oom__stop(struct hs_daemon *d);

/* ---------------------------------------------------------- "oom_pick.c" */

/* A followed process as a PSI wake-up sees it. */
struct hs_oom_cand {
	double inuse;	       /* its heap profile's in-use estimate, bytes */
	uint64_t usage, limit; /* its memory cgroup's; limit 0: none known
				* (no cgroup, unreadable, or unlimited v1) */
	bool cooled;	       /* out of its cooldown when the period began */
	bool captured;	       /* snapshotted in this period already
				* (over --oom-threshold) */
};

/*
 * The candidate a PSI wake-up snapshots, or -1.  Among those out of
 * cooldown: the one whose cgroup is nearest its limit, if one uses at
 * least HS_OOM_PSI_NEAR_LIMIT of it (on cgroup v1 the system-wide trigger
 * also fires for one cgroup's own reclaim, and that cgroup's process is
 * the one about to be killed); else the largest heap.  -1 also when that
 * one was captured this period (the pressure is explained, a bystander
 * is not blamed).  Pure; thread-safe.
 */
long hs_oom__psi_pick(const struct hs_oom_cand *c, size_t n);

/* --------------------------------------------------------- "oom_store.c" */

/*
 * Capture the followed process pid (start_time: its identity) now,
 * without stopping it: under the daemon lock the ring buffer drained,
 * residency read (pagemap, kpageflags), its stacks copied; outside it the
 * profile symbolized and encoded (gzip'd pprof, inuse and residency
 * types); the RSS table; then stored (and written to --dump-dir).  cg,
 * usage, limit: what the watch saw (cg may be NULL).  0, -ESRCH (not
 * followed any more), -ENOMEM, or the render's -errno.  Watch thread;
 * takes d->lock and o->lock.
 */
int hs_oom__capture(struct hs_daemon *d, pid_t pid, uint64_t start_time,
		    enum hs_oom_reason why, const struct hs_memcg *cg,
		    uint64_t usage, uint64_t limit);
/*
 * An HS_EV_OOM event: p (may be NULL: not followed) was chosen by the
 * OOM killer.  Its snapshots are marked the victim's (kept before
 * others), and its live set as of now is captured with reason oom_kill
 * (no residency: the kernel is reaping it).  Main thread, d->lock held.
 */
void hs_oom__on_kill(struct hs_daemon *d, struct hs_proc *p,
		     const struct hs_event *e);
/* Free every snapshot (their --dump-dir files stay).  At shutdown. */
void hs_oom__free_store(struct hs_oom *o);

#endif /* HS_OOM_H */
