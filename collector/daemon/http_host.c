// SPDX-License-Identifier: MIT
/*
 * http_host.c - the host profile: /debug/pprof/heap and
 * /debug/pprof/allocs without ?pid= or ?comm= answer one profile of every
 * followed process the requester may read (http_access.c), so a scraper
 * needs one target per host and groups by label.  Each sample carries
 * its process's labels (pid, comm, exe, cgroup, container_id,
 * systemd_unit: the names /targets uses); each process has its own
 * mappings and locations; folded and text put a root frame "COMM (PID)"
 * above each process's stacks.  ?seconds=S: per process, the difference
 * over S seconds; a process followed during them counts whole (nothing
 * of it was seen before), one gone by the end is left out (a comment
 * names it).  No process to show is an empty profile, not an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "http.h"

/* One snapshot per process, in an array that never moves (each
 * snapshot's meta points into itself). */
struct host_snaps {
	struct hs_snapshot *s;
	size_t n;
};

/* Under d->lock: snapshot every followed process who may read. */
static int snapshot_all(struct hs_daemon *d, const struct hs_http_peer *who,
			bool since_followed, uint64_t t0, struct host_snaps *h)
{
	struct hs_proc **ps = NULL, **np;
	size_t n = 0, cap = 0;
	int err = 0;

	h->s = NULL;
	h->n = 0;
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++)
		for (struct hs_proc *p = d->buckets[b]; p; p = p->next) {
			if (p->gone || !hs_http__may_read_proc(who, p))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				np = realloc(ps, cap * sizeof(*ps));
				if (!np) {
					free(ps);
					return -ENOMEM;
				}
				ps = np;
			}
			ps[n++] = p;
		}
	h->s = calloc(n ? n : 1, sizeof(*h->s));
	if (!h->s) {
		free(ps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++) {
		err = hs_daemon__snapshot(
			d, ps[i], NULL, since_followed ? ps[i]->created_ns : t0,
			&h->s[h->n]);
		if (!err)
			h->n++;
	}
	free(ps);
	return err;
}

/* Under d->lock. */
static void release_all(struct hs_daemon *d, struct host_snaps *h)
{
	for (size_t i = 0; i < h->n; i++)
		hs_daemon__release(d, &h->s[i]);
	free(h->s);
	h->s = NULL;
	h->n = 0;
}

static void lock_release_all(struct hs_daemon *d, struct host_snaps *h)
{
	pthread_mutex_lock(&d->lock);
	release_all(d, h);
	pthread_mutex_unlock(&d->lock);
}

/* Each snapshot of after becomes its difference from the same process
 * (pid and start time) in before, when there is one.  Without locks. */
static int difference(const struct host_snaps *before, struct host_snaps *after)
{
	for (size_t i = 0; i < after->n; i++) {
		struct hs_snapshot *a = &after->s[i];

		for (size_t j = 0; j < before->n; j++) {
			const struct hs_snapshot *b = &before->s[j];
			struct hs_stack_agg *delta;
			size_t n;
			int err;

			if (b->info.pid != a->info.pid ||
			    b->info.start_time != a->info.start_time)
				continue;
			err = hs_stack_table__delta(b->aggs, b->naggs, a->aggs,
						    a->naggs, &delta, &n);
			if (err)
				return err;
			free(a->aggs);
			a->aggs = delta;
			a->naggs = n;
			break;
		}
	}
	return 0;
}

/* Is there a process in h with that pid and start time? */
static bool has_proc(const struct host_snaps *h, pid_t pid, uint64_t start)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->s[i].info.pid == pid && h->s[i].info.start_time == start)
			return true;
	return false;
}

/* The host profile's comments (*notes malloc'd, each line too): what it
 * holds, each process's notes prefixed by its pid, and (secs) the
 * processes gone during the wait.  NULL lines are skipped by free_notes. */
static size_t host_notes(const struct host_snaps *h,
			 const struct host_snaps *before, char ***notes)
{
	size_t max = 2 + h->n * HS_REPORT_MAX_NOTES + (before ? before->n : 0),
	       n = 0;
	char **l = calloc(max, sizeof(*l));

	*notes = l;
	if (!l)
		return 0;
	if (asprintf(&l[n],
		     "heapscope: host profile of %zu followed "
		     "processes; every sample's labels pid, comm, exe, "
		     "cgroup, container_id and systemd_unit name its "
		     "process",
		     h->n) < 0)
		l[n] = NULL;
	n++;
	for (size_t i = 0; i < h->n; i++)
		for (size_t k = 0; k < h->s[i].meta.ncomments; k++, n++)
			if (asprintf(&l[n], "pid %d: %s", (int)h->s[i].info.pid,
				     h->s[i].comments[k]) < 0)
				l[n] = NULL;
	for (size_t j = 0; before && j < before->n; j++) {
		const struct hs_snapshot *b = &before->s[j];

		if (has_proc(h, b->info.pid, b->info.start_time))
			continue;
		if (asprintf(&l[n],
			     "pid %d (%s) exited or called exec during "
			     "the wait: left out",
			     (int)b->info.pid, b->info.comm) < 0)
			l[n] = NULL;
		n++;
	}
	return n;
}

static void free_notes(char **notes, size_t n)
{
	for (size_t i = 0; notes && i < n; i++)
		free(notes[i]);
	free(notes);
}

/* The profile's meta: Go's four types, the processes' sampling period
 * when they share one (else 0: a comment per process states its own). */
static void host_meta(const struct host_snaps *h, bool allocs, uint64_t t0,
		      char **notes, size_t nnotes, struct hs_pprof_meta *m)
{
	size_t k = 0;

	*m = (struct hs_pprof_meta){
		.time_nanos = (int64_t)t0,
		.duration_nanos = (int64_t)(hs_wall_ns() - t0),
		.allocs = allocs,
		.go_types = true,
		.period = h->n ? h->s[0].meta.period : 0,
	};
	for (size_t i = 1; i < h->n; i++)
		if (h->s[i].meta.period != m->period)
			m->period = 0;
	/* the NULL lines (out of memory) are skipped */
	for (size_t i = 0; i < nnotes; i++)
		if (notes[i])
			notes[k++] = notes[i];
	for (size_t i = k; i < nnotes; i++)
		notes[i] = NULL;
	m->comments = (const char *const *)notes;
	m->ncomments = k;
}

enum MHD_Result hs_http__host_profile(struct hs_daemon *d,
				      struct MHD_Connection *c,
				      const struct hs_http_peer *who,
				      bool allocs, long secs,
				      enum hs_format fmt)
{
	struct host_snaps before = {0}, snap = {0};
	struct hs_pprof_meta m;
	uint64_t t0 = hs_wall_ns();
	uint8_t *buf = NULL;
	size_t len = 0, nnotes;
	char **notes;
	int err;

	pthread_mutex_lock(&d->lock);
	hs_daemon__drain(d);
	err = snapshot_all(d, who, allocs && !secs, t0, secs ? &before : &snap);
	if (err)
		release_all(d, secs ? &before : &snap);
	pthread_mutex_unlock(&d->lock);
	if (!err && secs) {
		for (long i = 0; i < secs * 10 && !*d->exiting; i++) {
			struct timespec ts = {0, 100000000};

			nanosleep(&ts, NULL);
		}
		pthread_mutex_lock(&d->lock);
		hs_daemon__drain(d);
		err = *d->exiting ? -ECANCELED
				  : snapshot_all(d, who, false, t0, &snap);
		if (err)
			release_all(d, &snap);
		pthread_mutex_unlock(&d->lock);
		if (!err)
			err = difference(&before, &snap);
	}
	if (err) {
		lock_release_all(d, &before);
		lock_release_all(d, &snap);
		if (err == -ECANCELED)
			return hs_http__reply_error(
				d, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				"daemon shutting down");
		return hs_http__reply_error(d, c,
					    MHD_HTTP_INTERNAL_SERVER_ERROR,
					    "cannot build the host profile: "
					    "out of memory");
	}
	/* The earliest start of the processes' counts, for allocs since
	 * followed. */
	for (size_t i = 0; allocs && !secs && i < snap.n; i++)
		if ((uint64_t)snap.s[i].meta.time_nanos < t0)
			t0 = (uint64_t)snap.s[i].meta.time_nanos;
	nnotes = host_notes(&snap, secs ? &before : NULL, &notes);
	host_meta(&snap, allocs, t0, notes, nnotes, &m);
	err = hs_daemon__render_host(snap.s, snap.n, &m,
				     allocs ? HS_VALUE_ALLOC_SPACE
					    : HS_VALUE_INUSE,
				     fmt, &buf, &len);
	free_notes(notes, nnotes);
	lock_release_all(d, &before);
	lock_release_all(d, &snap);
	if (err)
		return hs_http__reply_error(d, c,
					    MHD_HTTP_INTERNAL_SERVER_ERROR,
					    "cannot build the host profile: "
					    "out of memory");
	return hs_http__reply(c, MHD_HTTP_OK,
			      fmt == HS_FORMAT_PPROF
				      ? "application/octet-stream"
				      : "text/plain; charset=utf-8",
			      buf, len, true);
}
