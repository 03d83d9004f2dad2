/* SPDX-License-Identifier: MIT */
/*
 * events.h - collector/events/: the two sources of samples applied to one
 * live set: ring-buffer events (struct hs_event, bpf/heapscope_event.h)
 * validated and applied, and the registry's records loaded after the
 * attach (events.c).  The BPF side of the stream (skeleton, ring buffer,
 * lost counters) is ring.h.  None is thread-safe unless stated.
 */
#ifndef HS_EVENTS_H
#define HS_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "heapscope_event.h"
#include "profiles.h"
#include "target.h"

/* An event's and a registry record's stack both fit a sample's, frame
 * for frame (hs_sample__from_event / __from_record copy them). */
_Static_assert(HS_EVENT_MAX_FRAMES == HEAPSCOPE_MAX_FRAMES,
	       "event and registry frame counts");
_Static_assert(sizeof(((struct hs_event *)0)->stack) ==
			       sizeof(((struct hs_sample *)0)->stack) &&
		       sizeof(((struct heapscope_record *)0)->stack) ==
			       sizeof(((struct hs_sample *)0)->stack),
	       "stack arrays");

/* ---------------------------------------------------------- "events.c" */

struct hs_event;
/* Fill *s (all other fields zeroed) from a ring-buffer event or a registry
 * record whose depth the caller has already validated (<= 64 frames). */
void hs_sample__from_event(struct hs_sample *s, const struct hs_event *e);
void hs_sample__from_record(struct hs_sample *s,
			    const struct heapscope_record *r);

/* A maps-refresh hint: stack[0..n) of a sample joining the live set
 * (hs_syms__hint for a struct hs_syms). */
typedef void (*hs_stack_hint_fn)(void *ctx, const uint64_t *stack, size_t n);

struct hs_events {
	struct hs_profile *prof;
	hs_stack_hint_fn hint; /* may be NULL */
	void *hint_ctx;
	pid_t pid;
	bool verbose;
	bool exited; /* exit event seen */
	bool execed; /* exec event seen */
	uint64_t allocs, frees, rates;
	uint64_t bad;	       /* malformed events */
	uint64_t stack_faults; /* events whose stack could not be read */
	int64_t period;	       /* last rate_change new period, 0 = unknown */
	/* compatible probes (HS_EVF_COMPAT events) */
	uint64_t compat_unmatched; /* frees of pointers not live here:
				    * allocated before the attach */
	uint64_t compat_replaced;  /* allocs at a live pointer (its free
				    * was lost): the old sample dropped */
	struct hs_window *win;	   /* allocs/lifetime/peak, may be NULL */
	/* allocations seen as events, per stack (hs_alloc_totals__add),
	 * may be NULL; alloc_lost counts those it had no memory for */
	struct hs_stack_table *totals;
	uint64_t alloc_lost;
};

/* Is data (size bytes from the ring buffer) a struct hs_event of this
 * build: size, magic, version, its own size field, depth <= 64 frames?
 * Nothing else of it is trusted yet.  Thread-safe. */
bool hs_event__valid(const void *data, size_t size);
/* ring_buffer_sample_fn: validates and applies one struct hs_event. */
int hs_events__handle(void *ctx, void *data, size_t size);

/* What hs_events__load_registry read. */
struct hs_registry_load {
	uint64_t addr;	  /* the registry's address, 0 = not located */
	size_t records;	  /* live records read */
	size_t added;	  /* of them, new to the live set */
	uint64_t invalid; /* records rejected by validation */
	unsigned retries; /* seqlock retries used */
	bool per_record;  /* copied with per-record checks only */
	int64_t period;	  /* the header's sample_period, bytes */
};

/*
 * Samples taken before the attach join the live set: locate the registry
 * in t's object (heapscope's), copy it out of process t->pid
 * (hs_registry__read) and add every record to ev->prof, and to ev->win as
 * a live alloc when new, hinting each stack; ev->period is set from the
 * header if still 0.  Attach the probes first: what changes during the
 * read then arrives as events too.  0, or the error of
 * hs_registry__locate (out->addr = 0) or of hs_registry__read.
 */
int hs_events__load_registry(struct hs_events *ev, const struct hs_target *t,
			     struct hs_registry_load *out);

#endif /* HS_EVENTS_H */
