// SPDX-License-Identifier: MIT
/*
 * events.c - consuming struct hs_event records from the BPF ring buffer:
 * validate the header, then apply allocs / frees to the live set, note
 * sequence numbers for gap detection, and flag exit / exec.  Events of
 * the compatible probes (HS_EVF_COMPAT: no record id, frees by pointer
 * only) are matched by pointer (hs_profile__alloc_ptr).  The registry's
 * records join the same live set (hs_events__load_registry): a sample is
 * in the registry, in the ring buffer or both, and counted once.
 */
#include <errno.h>
#include <string.h>

#include "events.h"
#include "heapscope_event.h"

void hs_sample__from_event(struct hs_sample *s, const struct hs_event *e)
{
	memset(s, 0, sizeof(*s));
	s->seq = e->seq;
	s->ptr = e->ptr;
	s->requested = e->requested;
	s->allocated = e->allocated;
	s->weight = e->weight;
	s->tid = e->tid;
	s->depth = e->depth;
	s->time_ns = e->ts_ns;
	if (e->flags & HS_EVF_COMPAT)
		s->flags |= HS_SAMPLE_COMPAT;
	memcpy(s->stack, e->stack, e->depth * sizeof(s->stack[0]));
}

void hs_sample__from_record(struct hs_sample *s,
			    const struct heapscope_record *r)
{
	memset(s, 0, sizeof(*s));
	s->seq = r->seq;
	s->ptr = r->ptr;
	s->requested = r->requested;
	s->allocated = r->allocated;
	s->weight = r->weight;
	s->tid = r->tid;
	s->depth = r->depth;
	s->time_ns = r->time_ns;
	memcpy(s->stack, r->stack, r->depth * sizeof(s->stack[0]));
}

/* Add sample s (decoded from an alloc event) to the profile, keyed by its
 * record id or (compatible probes, no id) by its pointer, and to the
 * window if there is one. */
static void add_live(struct hs_events *ev, struct hs_sample *s, bool by_ptr)
{
	int rc;

	if (ev->hint)
		ev->hint(ev->hint_ctx, s->stack, s->depth);
	rc = by_ptr ? hs_profile__alloc_ptr(ev->prof, s) :
		      hs_profile__alloc(ev->prof, s);
	if (rc < 0)
		ev->bad++;
	if (rc >= 0 && ev->totals && hs_alloc_totals__add(ev->totals, s))
		ev->alloc_lost++;
	if (ev->win) {
		hs_window__alloc_event(ev->win, s);
		if (rc == 0)
			hs_window__live_alloc(ev->win, s, ev->prof);
	}
}

/* Remove live sample seq (a free event at ts_ns, thread tid, stack). */
static void free_live(struct hs_events *ev, uint64_t seq,
		      const struct hs_event *e)
{
	const struct hs_sample *s = hs_profile__get(ev->prof, seq);

	if (s && ev->win)
		hs_window__live_free(ev->win, s, e->ts_ns, e->tid,
				     (const uint64_t *)e->stack, e->depth);
	if (hs_profile__free_seq(ev->prof, seq) < 0)
		ev->bad++;
}

static void on_alloc(struct hs_events *ev, const struct hs_event *e)
{
	struct hs_sample s;

	hs_sample__from_event(&s, e);
	ev->allocs++;
	hs_profile__note_seq(ev->prof, e->seq);
	add_live(ev, &s, false);
}

static void on_free(struct hs_events *ev, const struct hs_event *e)
{
	ev->frees++;
	hs_profile__note_seq(ev->prof, e->seq);
	free_live(ev, e->alloc_seq, e);
}

static void on_compat_alloc(struct hs_events *ev, const struct hs_event *e)
{
	struct hs_sample s;
	uint64_t old;

	hs_sample__from_event(&s, e);
	s.seq = 0;
	ev->allocs++;
	if (!s.ptr) {
		ev->bad++;
		return;
	}
	/* The address is live already: its free was lost (ring buffer) or
	 * never fired.  An address cannot be live twice: drop the old. */
	old = hs_profile__ptr_seq(ev->prof, s.ptr);
	if (old) {
		ev->compat_replaced++;
		free_live(ev, old, e);
	}
	add_live(ev, &s, true);
}

static void on_compat_free(struct hs_events *ev, const struct hs_event *e)
{
	uint64_t seq = hs_profile__ptr_seq(ev->prof, e->ptr);

	ev->frees++;
	if (!seq) {
		/* allocated before the attach (no registry to know it) */
		ev->compat_unmatched++;
		return;
	}
	free_live(ev, seq, e);
}

bool hs_event__valid(const void *data, size_t size)
{
	const struct hs_event *e = data;

	return size >= sizeof(*e) && e->magic == HS_EVENT_MAGIC &&
	       e->version == HS_EVENT_VERSION && e->size == sizeof(*e) &&
	       e->depth <= HS_EVENT_MAX_FRAMES;
}

int hs_events__handle(void *ctx, void *data, size_t size)
{
	struct hs_events *ev = ctx;
	const struct hs_event *e = data;

	if (!hs_event__valid(data, size)) {
		ev->bad++;
		return 0;
	}
	if (e->flags & HS_EVF_STACK_FAULT)
		ev->stack_faults++;
	/* USDT links are per pid, but tracepoints can see other processes
	 * (exec keeps the pid; threads report their thread-group id). */
	if (e->pid != (uint32_t)ev->pid) {
		ev->bad++;
		return 0;
	}
	/* After the exec (or exit) event the pid is another image: its
	 * events, queued behind it in the same poll or the final drain, must
	 * not join this profile, nor make the symbolizer refresh its maps
	 * snapshot to the new image's (the old stacks would then resolve to
	 * [unknown]). */
	if (ev->exited || ev->execed)
		return 0;
	if (e->flags & HS_EVF_COMPAT) {
		if (e->type == HS_EV_ALLOC)
			on_compat_alloc(ev, e);
		else if (e->type == HS_EV_FREE)
			on_compat_free(ev, e);
		else
			ev->bad++;
		return 0;
	}
	switch (e->type) {
	case HS_EV_ALLOC:
		on_alloc(ev, e);
		break;
	case HS_EV_FREE:
		on_free(ev, e);
		break;
	case HS_EV_RATE:
		ev->rates++;
		ev->period = e->new_period;
		break;
	case HS_EV_EXIT:
		ev->exited = true;
		break;
	case HS_EV_EXEC:
		ev->execed = true;
		break;
	default:
		ev->bad++;
		break;
	}
	return 0;
}

int hs_events__load_registry(struct hs_events *ev, const struct hs_target *t,
			     struct hs_registry_load *out)
{
	struct hs_registry_snapshot snap;
	pid_t pid = t->pid;
	int err;

	memset(out, 0, sizeof(*out));
	err = hs_registry__locate(t, &out->addr);
	if (err) {
		out->addr = 0;
		return err;
	}
	err = hs_registry__read(hs_registry__read_process, &pid, out->addr,
				&snap);
	if (err)
		return err;
	for (size_t i = 0; i < snap.n; i++) {
		struct hs_sample s;

		hs_sample__from_record(&s, &snap.recs[i]);
		if (ev->hint)
			ev->hint(ev->hint_ctx, s.stack, s.depth);
		if (hs_profile__alloc(ev->prof, &s) == 0) {
			out->added++;
			if (ev->win)
				hs_window__live_alloc(ev->win, &s, ev->prof);
		}
	}
	if (!ev->period)
		ev->period = snap.hdr.sample_period;
	out->records = snap.n;
	out->invalid = snap.invalid;
	out->retries = snap.retries;
	out->per_record = snap.per_record;
	out->period = snap.hdr.sample_period;
	hs_registry__free(&snap);
	return 0;
}
