// SPDX-License-Identifier: MIT
/*
 * proctable.c - the daemon's table of followed processes: created at the
 * first sight of a pid (event, /proc scan, HTTP request) with its registry
 * read, identified by pid + start time, forgotten on exit / exec / reuse;
 * and the profiles built from it (snapshot under the daemon lock, render
 * outside it with the process's own symbol lock).  Callers hold the daemon
 * lock unless a comment says otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "clock.h"
#include "heapscope_event.h"
#include "daemon.h"

/* ------------------------------------------------------------ processes */

static struct hs_symref *symref_new(pid_t pid, bool raw);
static void symref_put(struct hs_symref *r);

/* hs_stack_hint_fn of a process entry (ctx: its struct hs_symref). */
static void symref_hint(void *ctx, const uint64_t *stack, size_t n)
{
	hs_symref__check(ctx, stack, n);
}

struct hs_proc *hs_daemon__find(struct hs_daemon *d, pid_t pid)
{
	struct hs_proc *p = d->buckets[(uint32_t)pid % HS_DAEMON_BUCKETS];

	while (p && p->pid != pid)
		p = p->next;
	return p;
}

static void track(struct hs_daemon *d, pid_t pid, bool on)
{
	uint32_t key = pid;
	uint8_t one = 1;

	/* The map holds HS_TRACKED_PIDS_MAX pids; beyond that, exits are
	 * seen by sweeps. */
	if (on)
		bpf_map_update_elem(d->tracked_fd, &key, &one, BPF_ANY);
	else
		bpf_map_delete_elem(d->tracked_fd, &key);
}

void hs_daemon__forget(struct hs_daemon *d, struct hs_proc *p)
{
	struct hs_proc **pp = &d->buckets[(uint32_t)p->pid % HS_DAEMON_BUCKETS];

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	for (struct hs_scrape_window *w = p->windows; w; w = w->next) {
		w->dead = true;
		w->proc = NULL;
	}
	track(d, p->pid, false);
	if (d->lost_pid_fd > 0) {
		uint32_t key = p->pid;

		bpf_map_delete_elem(d->lost_pid_fd, &key);
	}
	symref_put(p->sym);
	hs_profile__free(p->ev.prof);
	hs_stack_table__free(&p->totals);
	hs_leaks__free(p->leaks);
	d->nprocs--;
	d->procs_freed++;
	if (d->verbose)
		fprintf(stderr, "heapscope daemon: forget pid %d (%s)\n",
			p->pid, p->info.comm);
	free(p);
}

/* Samples taken before we saw the process join its live set. */
static void read_registry(struct hs_daemon *d, struct hs_proc *p)
{
	struct hs_registry_load ld;
	int err;

	/* Compatible probes: no registry (an allocator's own, e.g.
	 * libheapscope's read through its otel_memory probes, would count
	 * twice: its records are keyed by id, these events by pointer). */
	if (!p->t.path[0] || p->t.provider != HS_PROVIDER_HEAPSCOPE) {
		p->reg_addr = 0;
		return;
	}
	err = hs_events__load_registry(&p->ev, &p->t, &ld);
	p->reg_addr = ld.addr;
	if (err)
		return;
	p->reg_period = ld.period;
	if (d->verbose)
		fprintf(stderr,
			"heapscope daemon: pid %d: registry: %zu live "
			"records\n",
			p->pid, ld.records);
}

static int find_target(struct hs_daemon *d, pid_t pid, struct hs_target *t)
{
	int err = -ENOENT;

	struct stat st;

	/* Each --lib with the probes chosen for it at attach (heapscope's
	 * sets t->provider HEAPSCOPE, the others that compatible one). */
	for (size_t i = 0; i < d->nlibs && err; i++)
		err = hs_target__find_provider(t, pid, d->libs[i],
					       d->lib_provider[i]);
	if (err || !d->no_copies)
		return err;
	/* --no-copies: only the very files given with --lib. */
	if (stat(t->open_path, &st))
		return -ENOENT;
	for (size_t i = 0; i < d->nobjs; i++)
		if (d->objs[i].dev == st.st_dev && d->objs[i].ino == st.st_ino)
			return 0;
	return -ENOENT;
}

/*
 * Start following pid.  A process already gone still gets an entry (its
 * buffered events need a home; the next sweep drops it), so this fails
 * only for lack of memory.
 */
struct hs_proc *hs_daemon__follow(struct hs_daemon *d, pid_t pid,
				const struct hs_target *t)
{
	struct hs_proc *p = calloc(1, sizeof(*p));
	uint32_t b = (uint32_t)pid % HS_DAEMON_BUCKETS;

	if (!p)
		return NULL;
	p->pid = pid;
	p->ev.pid = pid;
	p->ev.prof = hs_profile__new();
	p->ev.totals = &p->totals;
	if (!p->ev.prof) {
		free(p);
		return NULL;
	}
	p->created_ns = hs_wall_ns();
	if (hs_proc__info(pid, &p->info)) {
		p->gone = true;
		p->info.pid = p->info.nspid = pid;
	}
	p->start_time = p->info.start_time;
	if (t)
		p->t = *t;
	else if (!p->gone)
		find_target(d, pid, &p->t);
	track(d, pid, true);
	if (!p->gone && p->t.open_path[0] && d->skel) {
		int aerr = hs_daemon__attach_object(d, p->t.open_path,
						    p->t.provider, NULL);

		if (aerr)
			fprintf(stderr,
				"heapscope daemon: pid %d: cannot attach to "
				"its copy %s: %s; only its registry is "
				"read\n",
				pid, p->t.path, strerror(-aerr));
	}
	if (!p->gone) {
		p->sym = symref_new(pid, d->raw_symbols);
		p->ev.hint = symref_hint;
		p->ev.hint_ctx = p->sym;
		read_registry(d, p);
	}
	p->next = d->buckets[b];
	d->buckets[b] = p;
	d->nprocs++;
	d->procs_seen++;
	if (d->verbose)
		fprintf(stderr,
			"heapscope daemon: follow pid %d (nspid %d, %s, %s)\n",
			pid, p->info.nspid, p->info.comm, p->info.binary);
	return p;
}

int hs_daemon__get(struct hs_daemon *d, pid_t pid, struct hs_proc **out)
{
	struct hs_target t;
	struct hs_proc *p = hs_daemon__find(d, pid);
	int err;

	if (p && !p->gone) {
		*out = p;
		return 0;
	}
	if (!hs_proc__alive(pid))
		return -ESRCH;
	err = find_target(d, pid, &t);
	if (err)
		return err == -ESRCH ? -ESRCH : -ENOENT;
	if (p) /* gone, then found again: a new process with that pid */
		hs_daemon__forget(d, p);
	p = hs_daemon__follow(d, pid, &t);
	if (!p)
		return -ENOMEM;
	*out = p;
	return p->gone ? -ESRCH : 0;
}

uint64_t hs_daemon__lost(const struct hs_daemon *d, pid_t pid)
{
	uint32_t key = pid;
	uint64_t n = 0;

	if (d->lost_pid_fd <= 0 || bpf_map_lookup_elem(d->lost_pid_fd, &key, &n))
		return 0;
	return n;
}

double hs_daemon__inuse(const struct hs_proc *p)
{
	struct hs_stack_agg *aggs = NULL;
	size_t n = 0;
	double sum = 0;

	if (hs_profile__aggregate(p->ev.prof, &aggs, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += aggs[i].inuse;
	free(aggs);
	return sum;
}

/* Dead pids and reused pids (start time changed) are forgotten. */
void hs_daemon__sweep(struct hs_daemon *d)
{
	for (size_t b = 0; b < HS_DAEMON_BUCKETS; b++) {
		struct hs_proc *p = d->buckets[b], *next;

		for (; p; p = next) {
			uint64_t st;

			next = p->next;
			if (p->gone ||
			    hs_proc__start_time(p->pid, &st) == -ESRCH ||
			    (p->start_time && st != p->start_time)) {
				hs_daemon__forget(d, p);
				continue;
			}
			if (p->sym && !pthread_mutex_trylock(&p->sym->lock)) {
				hs_syms__tick(p->sym->syms);
				pthread_mutex_unlock(&p->sym->lock);
			}
		}
	}
}

/* Startup: processes already running that map one of the objects. */
void hs_daemon__scan(struct hs_daemon *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	struct hs_target t;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX || pid == getpid())
			continue;
		if (hs_daemon__find(d, (pid_t)pid))
			continue;
		if (!find_target(d, (pid_t)pid, &t))
			hs_daemon__follow(d, (pid_t)pid, &t);
	}
	closedir(dir);
}

/* ------------------------------------------------------------ profiles */

static struct hs_symref *symref_new(pid_t pid, bool raw)
{
	struct hs_symref *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->refs = 1;
	r->syms = hs_syms__new(pid);
	hs_syms__set_raw(r->syms, raw);
	return r;
}

static void symref_put(struct hs_symref *r)
{
	if (!r || --r->refs)
		return;
	hs_syms__free(r->syms);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* A hint for the maps snapshot; skipped while a scrape symbolizes. */
void hs_symref__check(struct hs_symref *r, const uint64_t *a, size_t n)
{
	if (!r || !r->syms || pthread_mutex_trylock(&r->lock))
		return;
	hs_syms__check(r->syms, a, n);
	pthread_mutex_unlock(&r->lock);
}

int hs_daemon__snapshot(struct hs_daemon *d, struct hs_proc *p,
			struct hs_scrape_window *w, uint64_t start_ns,
			struct hs_snapshot *snap)
{
	struct heapscope_registry h;
	struct hs_report_stats st = {
		.pid = p->pid,
		.nspid = p->info.nspid,
		.binary = p->info.binary,
		.live = hs_profile__live(p->ev.prof),
		.lost_ringbuf = d->lost[HS_LOST_RINGBUF],
		.seq_lost = hs_profile__seq_lost(p->ev.prof),
		.lost_stack = d->lost[HS_LOST_STACK],
		.lost_ringbuf_proc = hs_daemon__lost(d, p->pid),
		.period = p->ev.period,
		/* compatible probes: the comments state the missing registry
		 * and the frees of allocations from before the attach */
		.provider = p->t.provider,
		.compat_no_free = p->t.path[0] &&
				  !hs_notes_have_free(p->t.notes, p->t.provider),
		.compat_unmatched = p->ev.compat_unmatched,
	};
	int err;

	memset(snap, 0, sizeof(*snap));
	snap->info = p->info;
	hs_proc__cgroup_ids(snap->info.cgroup, snap->container_id, snap->unit,
			    sizeof(snap->unit));
	snap->meta = (struct hs_pprof_meta){
		.pid = p->pid,
		.nspid = p->info.nspid,
		.comm = snap->info.comm,
		.exe = snap->info.binary,
		.cgroup = snap->info.cgroup,
		.container_id = snap->container_id,
		.unit = snap->unit,
		.period = p->ev.period,
		.time_nanos = (int64_t)start_ns,
		.duration_nanos = (int64_t)(hs_wall_ns() - start_ns),
		.comments = snap->cptr,
		.allocs = w != NULL,
		.go_types = w == NULL,
	};
	if (p->reg_addr && !hs_registry__read_header(p->pid, p->reg_addr, &h)) {
		st.sampled_bytes = h.sampled_bytes;
		st.cached_bytes = h.cached_bytes;
		st.records = h.live;
		if (h.sample_period > 0)
			st.period = snap->meta.period = h.sample_period;
	}
	snap->meta.ncomments = hs_report__comments(
		snap->comments, HS_REPORT_MAX_NOTES, &st);
	for (size_t i = 0; i < snap->meta.ncomments; i++)
		snap->cptr[i] = snap->comments[i];
	err = w ? hs_profile__aggregate(w->prof, &snap->aggs, &snap->naggs)
		: hs_profile__aggregate_heap(p->ev.prof, &p->totals,
					     &snap->aggs, &snap->naggs);
	if (err)
		return err;
	snap->sym = p->sym;
	if (snap->sym)
		snap->sym->refs++;
	return 0;
}

void hs_daemon__release(struct hs_daemon *d, struct hs_snapshot *snap)
{
	(void)d;
	symref_put(snap->sym);
	snap->sym = NULL;
	free(snap->aggs);
	snap->aggs = NULL;
}

/* Stacks sampled since the last refresh may lie in a library loaded
 * after it: refresh the maps now rather than name them [unknown].  Under
 * the snapshot's symbol lock. */
static void sync_maps(struct hs_snapshot *snap, struct hs_syms *syms)
{
	if (!syms)
		return;
	for (size_t i = 0; i < snap->naggs; i++)
		hs_syms__check(syms, snap->aggs[i].stack, snap->aggs[i].depth);
	hs_syms__sync(syms);
}

static int render_locked(struct hs_snapshot *snap, struct hs_syms *syms,
			 enum hs_format fmt, uint8_t **out, size_t *len)
{
	struct hs_render r = {
		.aggs = snap->aggs,
		.naggs = snap->naggs,
		.value = snap->value,
		.syms = syms,
		.meta = &snap->meta,
		.text_notes = true,
	};

	sync_maps(snap, syms);
	return hs_render(&r, fmt, out, len);
}

int hs_daemon__render(struct hs_snapshot *snap, enum hs_format fmt,
		      uint8_t **out, size_t *len)
{
	int err;

	if (!snap->sym)
		return render_locked(snap, NULL, fmt, out, len);
	pthread_mutex_lock(&snap->sym->lock);
	err = render_locked(snap, snap->sym->syms, fmt, out, len);
	pthread_mutex_unlock(&snap->sym->lock);
	return err;
}

int hs_daemon__render_host(struct hs_snapshot *snaps, size_t n,
			   const struct hs_pprof_meta *meta, enum hs_value value,
			   enum hs_format fmt, uint8_t **out, size_t *len)
{
	struct hs_render_host *h;
	int err = hs_render_host__new(fmt, value, meta, true, &h);

	for (size_t i = 0; i < n && !err; i++) {
		struct hs_symref *r = snaps[i].sym;
		struct hs_syms *syms = r ? r->syms : NULL;

		/* one process's symbol lock at a time, never the daemon's */
		if (r)
			pthread_mutex_lock(&r->lock);
		sync_maps(&snaps[i], syms);
		err = hs_render_host__add(h, snaps[i].aggs, snaps[i].naggs, syms,
					  &snaps[i].meta);
		if (r)
			pthread_mutex_unlock(&r->lock);
	}
	if (err) {
		hs_render_host__end(h, NULL, NULL);
		return err;
	}
	return hs_render_host__end(h, out, len);
}
