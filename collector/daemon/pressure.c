// SPDX-License-Identifier: MIT
/*
 * pressure.c - the daemon's memory-pressure watch and its options: how
 * near each followed process's memory cgroup (or the tightest ancestor)
 * is to its limit (read by collector/target/memcg.c), and PSI (a trigger
 * on /proc/pressure/memory, and memory.pressure of v2 cgroups).  A thread
 * wakes every
 * HS_OOM_INTERVAL_MS, or at once when the PSI trigger fires, and asks
 * oom_store.c for a snapshot of a process over --oom-threshold of its
 * limit (reason cgroup_limit) or under pressure (psi), at most one per
 * process per --oom-cooldown.  The OOM kills themselves come from the
 * oom/mark_victim tracepoint through the ring buffer (daemon.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "attach.h"
#include "clock.h"
#include "daemon.h"
#include "heapscope.skel.h"

#define CG_REREAD_NS (1000 * HS_NS_PER_MS)  /* a process's cgroup lookup */
#define PSI_REREAD_NS (1000 * HS_NS_PER_MS) /* memory.pressure per cgroup */

const char *hs_oom_reason_name(enum hs_oom_reason r)
{
	switch (r) {
	case HS_OOM_CGROUP_LIMIT:
		return "cgroup_limit";
	case HS_OOM_PSI:
		return "psi";
	case HS_OOM_KILL:
		return "oom_kill";
	}
	return "unknown";
}

/* ------------------------------------------------------------ options */

void hs_oom__defaults(struct hs_oom *o)
{
	o->threshold = HS_OOM_THRESHOLD;
	o->cooldown_ns = (uint64_t)HS_OOM_COOLDOWN_S * HS_NS_PER_S;
	o->keep = HS_OOM_KEEP;
	o->psi_fd = o->wake_fd = -1;
	pthread_mutex_init(&o->lock, NULL);
}

int hs_oom__option(struct hs_oom *o, const char *name, const char *value)
{
	char *end;

	errno = 0;
	if (!strcmp(name, "oom-threshold")) {
		double v = strtod(value, &end);

		if (errno || end == value || *end || !(v >= 0 && v <= 1))
			goto bad;
		o->threshold = v;
		return 0;
	}
	if (value[0] < '0' || value[0] > '9')
		goto bad;
	unsigned long long v = strtoull(value, &end, 10);

	if (errno || *end)
		goto bad;
	if (!strcmp(name, "oom-cooldown") && v <= 86400) {
		o->cooldown_ns = v * HS_NS_PER_S;
		return 0;
	}
	if (!strcmp(name, "oom-keep") && v >= 1 && v <= HS_OOM_KEEP_MAX) {
		o->keep = v;
		return 0;
	}
bad:
	return -EINVAL;
}

/* ------------------------------------------------------------ watch */

/* The entry of (pid, start), made if need be; NULL when the table is
 * full.  hint: where it was last period (the process list comes in the
 * same order each period, so the search is O(1) but after changes). */
static struct hs_oom_watch *watch_of(struct hs_oom *o, pid_t pid,
				     uint64_t start, size_t hint)
{
	if (hint < o->nwatch && o->watch[hint].pid == pid &&
	    o->watch[hint].start_time == start)
		return &o->watch[hint];
	for (size_t i = 0; i < o->nwatch; i++)
		if (o->watch[i].pid == pid && o->watch[i].start_time == start)
			return &o->watch[i];
	if (o->nwatch == HS_OOM_WATCH_MAX)
		return NULL;
	memset(&o->watch[o->nwatch], 0, sizeof(o->watch[0]));
	o->watch[o->nwatch].pid = pid;
	o->watch[o->nwatch].start_time = start;
	return &o->watch[o->nwatch++];
}

/* Entries of processes no longer followed go (swap with the last). */
static void watch_prune(struct hs_oom *o)
{
	for (size_t i = 0; i < o->nwatch;) {
		if (o->watch[i].seen) {
			o->watch[i++].seen = false;
			continue;
		}
		o->watch[i] = o->watch[--o->nwatch];
	}
}

static bool cooled(const struct hs_oom *o, const struct hs_oom_watch *w,
		   uint64_t now)
{
	return !w->last_snap_ns || now - w->last_snap_ns >= o->cooldown_ns;
}

static void capture(struct hs_daemon *d, struct hs_oom_watch *w,
		    enum hs_oom_reason why, uint64_t usage, uint64_t limit)
{
	int err;

	w->last_snap_ns = hs_mono_ns();
	err = hs_oom__capture(d, w->pid, w->start_time, why,
			      w->cg.version ? &w->cg : NULL, usage, limit);
	if (err && err != -ESRCH)
		fprintf(stderr,
			"heapscope daemon: pre-OOM snapshot of pid %d (%s) "
			"failed: %s\n",
			w->pid, hs_oom_reason_name(why), strerror(-err));
}

/* One period: every followed process against its limit, a snapshot of
 * each over --oom-threshold; psi: the system trigger fired, and one more
 * process is captured, the one hs_oom__psi_pick (oom_pick.c) chooses. */
static void check(struct hs_daemon *d, bool psi)
{
	static struct {
		pid_t pid;
		uint64_t start;
		double inuse;
	} list[HS_OOM_WATCH_MAX];
	static struct hs_oom_cand cand[HS_OOM_WATCH_MAX];
	static struct hs_oom_watch *of[HS_OOM_WATCH_MAX];
	struct hs_oom *o = &d->oom;
	uint64_t now = hs_mono_ns();
	size_t n = 0, nc = 0;
	long pick;

	pthread_mutex_lock(&d->lock);
	for (size_t b = 0; b < HS_DAEMON_BUCKETS && n < HS_OOM_WATCH_MAX; b++)
		for (struct hs_proc *p = d->buckets[b];
		     p && n < HS_OOM_WATCH_MAX; p = p->next) {
			if (p->gone || !p->start_time)
				continue;
			list[n].pid = p->pid;
			list[n].start = p->start_time;
			list[n++].inuse = psi ? hs_daemon__inuse(p) : 0;
		}
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n && !o->stop; i++) {
		struct hs_oom_watch *w =
			watch_of(o, list[i].pid, list[i].start, i);
		struct hs_oom_cand *c = &cand[nc];
		uint64_t usage, limit;
		double avg10;

		if (!w)
			break;
		w->seen = true;
		memset(c, 0, sizeof(*c));
		c->inuse = list[i].inuse;
		c->cooled = cooled(o, w, now);
		of[nc++] = w;
		/* Which cgroup, and whether any limit is above it, once a
		 * second; usage every period only under a limit (the cost:
		 * two small reads per level of the hierarchy). */
		if (!w->cg_read_ns || now - w->cg_read_ns >= CG_REREAD_NS) {
			w->unlimited =
				hs_memcg__of(&o->mounts, w->pid, &w->cg) ||
				hs_memcg__usage(&w->cg, &usage, &limit) ||
				!limit;
			w->cg_read_ns = now;
		}
		if (!w->cg.version || !c->cooled ||
		    (w->unlimited && w->cg.version == 1) ||
		    hs_memcg__usage(&w->cg, &usage, &limit))
			continue;
		c->usage = usage;
		c->limit = limit;
		if (limit && (double)usage >= o->threshold * (double)limit) {
			capture(d, w, HS_OOM_CGROUP_LIMIT, usage, limit);
			c->captured = true;
			continue;
		}
		if (w->cg.version == 2 &&
		    now - w->psi_read_ns >= PSI_REREAD_NS) {
			w->psi_read_ns = now;
			if (!hs_memcg__pressure(&w->cg, &avg10) &&
			    avg10 >= HS_OOM_PSI_AVG10) {
				capture(d, w, HS_OOM_PSI, usage, limit);
				c->captured = true;
			}
		}
	}
	pick = psi ? hs_oom__psi_pick(cand, nc) : -1;
	if (pick >= 0) {
		struct hs_oom_watch *w = of[pick];
		uint64_t usage = cand[pick].usage, limit = cand[pick].limit;

		if (!limit && w->cg.version)
			hs_memcg__usage(&w->cg, &usage, &limit);
		capture(d, w, HS_OOM_PSI, usage, limit);
	}
	watch_prune(o);
}

static void *watch_main(void *arg)
{
	struct hs_daemon *d = arg;
	struct hs_oom *o = &d->oom;

	while (!o->stop && !*d->exiting) {
		struct pollfd fds[2] = {{.fd = o->wake_fd, .events = POLLIN},
					{.fd = o->psi_fd, .events = POLLPRI}};
		int n = poll(fds, o->psi_fd >= 0 ? 2 : 1, HS_OOM_INTERVAL_MS);
		bool psi = n > 0 && (fds[1].revents & POLLPRI);

		if (n > 0 && o->psi_fd >= 0 && (fds[1].revents & POLLERR)) {
			fprintf(stderr, "heapscope daemon: the PSI trigger "
					"failed; memory cgroup limits are "
					"still watched\n");
			close(o->psi_fd);
			o->psi_fd = -1;
		}
		if (!o->stop)
			check(d, psi);
	}
	return NULL;
}

/* A PSI trigger on /proc/pressure/memory: -1 when the kernel has none
 * (no CONFIG_PSI, psi=0) and the watch only polls. */
static int psi_open(bool verbose)
{
	int fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 ||
	    write(fd, HS_OOM_PSI_TRIGGER, strlen(HS_OOM_PSI_TRIGGER) + 1) < 0) {
		if (verbose)
			fprintf(stderr,
				"heapscope daemon: no PSI trigger on "
				"/proc/pressure/memory: %s\n",
				strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int hs_oom__start(struct hs_daemon *d)
{
	struct hs_oom *o = &d->oom;
	int err;

	if (o->threshold <= 0)
		return 0;
	err = hs_attach__oom(d->skel);
	if (err)
		fprintf(stderr,
			"heapscope daemon: warning: no oom/mark_victim "
			"tracepoint (%s): OOM kills are seen as "
			"exits, pre-OOM snapshots are still taken\n",
			strerror(-err));
	hs_memcg__mounts(&o->mounts);
	if (!o->mounts.v1[0] && !o->mounts.v2[0])
		fprintf(stderr,
			"heapscope daemon: warning: no memory cgroup "
			"hierarchy mounted: no cgroup limits watched\n");
	o->psi_fd = psi_open(d->verbose);
	o->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (o->wake_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&o->thread, NULL, watch_main, d);
	if (err)
		goto fail;
	o->running = true;
	return 0;
fail:
	fprintf(stderr,
		"heapscope daemon: cannot start the memory-pressure "
		"watch: %s\n",
		strerror(-err));
	if (o->psi_fd >= 0)
		close(o->psi_fd);
	if (o->wake_fd >= 0)
		close(o->wake_fd);
	o->psi_fd = o->wake_fd = -1;
	return err;
}

void hs_oom__stop(struct hs_daemon *d)
{
	struct hs_oom *o = &d->oom;
	uint64_t one = 1;

	if (o->running) {
		o->stop = true;
		/* if this fails the thread still wakes within a period */
		(void)!write(o->wake_fd, &one, sizeof(one));
		pthread_join(o->thread, NULL);
		o->running = false;
	}
	if (o->psi_fd >= 0)
		close(o->psi_fd);
	if (o->wake_fd >= 0)
		close(o->wake_fd);
	o->psi_fd = o->wake_fd = -1;
	hs_oom__free_store(o);
}
