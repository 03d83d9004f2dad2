// SPDX-License-Identifier: MIT
/*
 * oom_store.c - pre-OOM snapshots: taking one (the heap profile with
 * residency, rendered as gzip'd pprof through the daemon's one render
 * path, plus the RSS table), keeping at most --oom-keep of them and
 * HS_OOM_BYTES_MAX bytes of profiles (the oldest that is not an OOM
 * victim's goes first), writing each to --dump-dir atomically (its file
 * removed when it is evicted, so the directory is bounded too), and
 * marking the snapshots of the process the OOM killer chose.
 *
 * A snapshot never stops the target: the live set is the daemon's own
 * (ring-buffer events and the registry read at follow), residency is
 * read from /proc/PID/pagemap and /proc/kpageflags, and symbolizing
 * reads the target's files.  Its time is bounded by the drain (100 ms)
 * plus a pass over the live samples; its memory by the live stacks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "daemon.h"
#include "http.h"

/*
 * The RSS table (profiles/rss.c: where the process's RSS went) of the
 * process whose allocator object is tg, as its JSON object
 * (export/export_rss.c, as /debug/heapscope/rss answers), malloc'd; NULL
 * when it cannot be read (a library without the statistics block, the
 * process gone: serialized as null).  Thread-safe; no lock held.
 */
static char *snapshot_rss_json(const struct hs_target *tg)
{
	struct hs_rss_table t;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (hs_rss_table_read_target(tg, &t))
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	err = hs_rss__write_json(f, &t);
	if (fclose(f) || err) {
		free(text);
		return NULL;
	}
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (!len) {
		free(text);
		return NULL;
	}
	return text;
}

/* Who may read pid's snapshots besides root: its uid, when the process
 * is its own by hs_http__may_read's rule (not set-uid, dumpable). */
static bool owner_of(pid_t pid, uint64_t start, uid_t *uid)
{
	char path[32];
	struct stat st;
	struct hs_http_peer who = {.all = false};
	uint64_t s;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return false;
	who.uid = st.st_uid;
	if (hs_http__may_read(&who, pid, &s) || s != start)
		return false;
	*uid = st.st_uid;
	return true;
}

static void snap_free(struct hs_oom_snap *s)
{
	if (!s)
		return;
	free(s->pprof);
	free(s->rss_json);
	free(s);
}

/* Drop the store's oldest snapshot that is not a victim's (else its
 * oldest), and its file.  o->lock held. */
static void evict_one(struct hs_oom *o)
{
	struct hs_oom_snap **pp, **pick = NULL, **any = NULL, *s;

	for (pp = &o->snaps; *pp; pp = &(*pp)->next) {
		any = pp;
		if (!(*pp)->victim)
			pick = pp;
	}
	if (!pick)
		pick = any;
	if (!pick)
		return;
	s = *pick;
	*pick = s->next;
	o->nsnaps--;
	o->bytes -= s->len;
	o->evicted++;
	if (s->file[0])
		unlink(s->file);
	snap_free(s);
}

/* Write s to --dump-dir; a failure is reported and counted, the
 * snapshot stays in memory. */
static void dump(struct hs_daemon *d, struct hs_oom_snap *s)
{
	char path[PATH_MAX];
	int err;

	if (!d->dump_dir)
		return;
	if (snprintf(path, sizeof(path), "%s/oom-%d-%llu-%llu-%s.pb.gz",
		     d->dump_dir, s->pid, (unsigned long long)s->start_time,
		     (unsigned long long)s->id,
		     hs_oom_reason_name(s->reason)) >= (int)sizeof(path))
		err = -ENAMETOOLONG;
	else
		err = hs_write_file_atomic(path, s->pprof, s->len);
	if (err) {
		pthread_mutex_lock(&d->oom.lock);
		d->oom.dump_errors++;
		pthread_mutex_unlock(&d->oom.lock);
		fprintf(stderr,
			"heapscope daemon: OOM snapshot %llu of pid %d not "
			"written to %s: %s (kept in memory: "
			"/debug/heapscope/oom/%llu.pb.gz)\n",
			(unsigned long long)s->id, s->pid, d->dump_dir,
			strerror(-err), (unsigned long long)s->id);
		return;
	}
	snprintf(s->file, sizeof(s->file), "%s", path);
}

/* Give s its id, write it out, put it in the store, keep the bounds. */
static void store(struct hs_daemon *d, struct hs_oom_snap *s)
{
	struct hs_oom *o = &d->oom;

	pthread_mutex_lock(&o->lock);
	s->id = ++o->next_id;
	o->taken++;
	o->taken_by[s->reason]++;
	pthread_mutex_unlock(&o->lock);
	/* the file before the store: HTTP readers see s complete */
	dump(d, s);
	pthread_mutex_lock(&o->lock);
	s->next = o->snaps;
	o->snaps = s;
	o->nsnaps++;
	o->bytes += s->len;
	while (o->nsnaps > o->keep ||
	       (o->bytes > HS_OOM_BYTES_MAX && o->nsnaps > 1))
		evict_one(o);
	pthread_mutex_unlock(&o->lock);
	if (d->verbose)
		fprintf(stderr,
			"heapscope daemon: OOM snapshot %llu: pid %d (%s), "
			"%s, %zu bytes of pprof, %.1f ms\n",
			(unsigned long long)s->id, s->pid, s->comm,
			hs_oom_reason_name(s->reason), s->len,
			(double)s->capture_ns / HS_NS_PER_MS);
}

/* The snapshot's note in the profile: why, and the cgroup's figures. */
static void note(struct hs_snapshot *snap, const struct hs_oom_snap *s)
{
	size_t i = snap->meta.ncomments;

	if (i >= HS_REPORT_MAX_NOTES)
		return;
	snprintf(snap->comments[i], HS_REPORT_NOTE_LEN,
		 "heapscope OOM snapshot: reason %s, memory cgroup %s (v%d), "
		 "usage %llu of limit %llu bytes%s",
		 hs_oom_reason_name(s->reason),
		 s->cg.version ? s->cg.path : "-", s->cg.version,
		 (unsigned long long)s->usage, (unsigned long long)s->limit,
		 s->residency ? "" : "; residency not read");
	snap->cptr[i] = snap->comments[i];
	snap->meta.ncomments = i + 1;
}

/* The snapshot's types: the heap's inuse_* and, when read, residency. */
static void as_oom_profile(struct hs_snapshot *snap, struct hs_oom_snap *s)
{
	snap->meta.go_types = false;
	snap->meta.allocs = false;
	snap->meta.residency = s->residency;
	snap->value = HS_VALUE_INUSE;
	s->heap_bytes = 0;
	for (size_t i = 0; i < snap->naggs; i++)
		s->heap_bytes += snap->aggs[i].inuse;
	note(snap, s);
}

static struct hs_oom_snap *snap_new(const struct hs_proc *p,
				    enum hs_oom_reason why,
				    const struct hs_memcg *cg, uint64_t usage,
				    uint64_t limit)
{
	struct hs_oom_snap *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = p->pid;
	s->start_time = p->start_time;
	memcpy(s->comm, p->info.comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	if (cg)
		s->cg = *cg;
	s->reason = why;
	s->usage = usage;
	s->limit = limit;
	s->time_ns = hs_wall_ns();
	return s;
}

int hs_oom__capture(struct hs_daemon *d, pid_t pid, uint64_t start_time,
		    enum hs_oom_reason why, const struct hs_memcg *cg,
		    uint64_t usage, uint64_t limit)
{
	uint64_t t0 = hs_mono_ns();
	struct hs_snapshot snap;
	struct hs_target tg;
	struct hs_oom_snap *s;
	struct hs_proc *p;
	int err;

	pthread_mutex_lock(&d->lock);
	hs_daemon__drain(d);
	p = hs_daemon__find(d, pid);
	if (!p || p->gone || p->start_time != start_time) {
		pthread_mutex_unlock(&d->lock);
		return -ESRCH;
	}
	s = snap_new(p, why, cg, usage, limit);
	if (!s) {
		pthread_mutex_unlock(&d->lock);
		return -ENOMEM;
	}
	tg = p->t;
	/* residency of every live sample: pagemap reads, the target runs */
	s->residency = !hs_profile__scan_residency(p->ev.prof, pid);
	err = hs_daemon__snapshot(d, p, NULL, s->time_ns, &snap);
	pthread_mutex_unlock(&d->lock);
	if (err) {
		snap_free(s);
		return err;
	}
	/* the RSS table next to the heap's copy, before the slow render */
	s->rss_json = snapshot_rss_json(&tg);
	as_oom_profile(&snap, s);
	err = hs_daemon__render(&snap, HS_FORMAT_PPROF, &s->pprof, &s->len);
	pthread_mutex_lock(&d->lock);
	hs_daemon__release(d, &snap);
	pthread_mutex_unlock(&d->lock);
	if (err) {
		pthread_mutex_lock(&d->oom.lock);
		d->oom.capture_errors++;
		pthread_mutex_unlock(&d->oom.lock);
		snap_free(s);
		return err;
	}
	s->owner_known = owner_of(pid, start_time, &s->owner);
	s->capture_ns = hs_mono_ns() - t0;
	store(d, s);
	return 0;
}

void hs_oom__on_kill(struct hs_daemon *d, struct hs_proc *p,
		     const struct hs_event *e)
{
	struct hs_oom *o = &d->oom;
	uint64_t t0 = hs_mono_ns(), usage = 0, limit = 0, peak;
	struct hs_memcg cg = {0};
	struct hs_snapshot snap;
	struct hs_oom_snap *s;
	bool owner_known = false;
	uid_t owner = 0;

	pthread_mutex_lock(&o->lock);
	o->kills++;
	/* newest first: cg and owner are the newest snapshot's */
	for (s = o->snaps; s && p; s = s->next)
		if (s->pid == p->pid && s->start_time == p->start_time) {
			s->victim = true;
			if (!owner_known && s->owner_known) {
				owner_known = true;
				owner = s->owner;
			}
			if (!cg.version && s->cg.version)
				cg = s->cg;
		}
	pthread_mutex_unlock(&o->lock);
	fprintf(stderr,
		"heapscope daemon: the OOM killer chose pid %u (%.16s)%s\n",
		e->pid, e->comm,
		p ? "; its heap as of now is kept" : " (not followed)");
	if (!p || p->gone || o->threshold <= 0)
		return;
	/* As of the kill: the live set the daemon holds (the process is
	 * still mapped while the kill is delivered); its pages are being
	 * reaped, so no residency. */
	/* An exiting task is moved to the root cgroup: the cgroup of its
	 * earlier snapshot, else of now (it may not be exiting yet). */
	if (cg.version || !hs_memcg__of(&o->mounts, p->pid, &cg))
		hs_memcg__usage(&cg, &usage, &limit);
	/* usage now is after the kernel reclaimed for the kill: the
	 * cgroup's own peak is what it held when the killer acted */
	if (!hs_memcg__peak(&cg, &peak) && peak > usage)
		usage = peak;
	s = snap_new(p, HS_OOM_KILL, cg.version ? &cg : NULL, usage, limit);
	if (!s || hs_daemon__snapshot(d, p, NULL, s->time_ns, &snap)) {
		snap_free(s);
		return;
	}
	s->victim = true;
	as_oom_profile(&snap, s);
	/* Under the daemon lock, as SIGHUP dumps: one process, once. */
	if (hs_daemon__render(&snap, HS_FORMAT_PPROF, &s->pprof, &s->len)) {
		hs_daemon__release(d, &snap);
		snap_free(s);
		pthread_mutex_lock(&o->lock);
		o->capture_errors++;
		pthread_mutex_unlock(&o->lock);
		return;
	}
	hs_daemon__release(d, &snap);
	s->rss_json = snapshot_rss_json(&p->t);
	/* the dying process may no longer answer: its earlier snapshot's */
	s->owner_known = owner_of(p->pid, p->start_time, &s->owner);
	if (!s->owner_known && owner_known) {
		s->owner_known = true;
		s->owner = owner;
	}
	s->capture_ns = hs_mono_ns() - t0;
	store(d, s);
}

void hs_oom__free_store(struct hs_oom *o)
{
	pthread_mutex_lock(&o->lock);
	while (o->snaps) {
		struct hs_oom_snap *s = o->snaps;

		o->snaps = s->next;
		snap_free(s);
	}
	o->nsnaps = o->bytes = 0;
	pthread_mutex_unlock(&o->lock);
}
