// SPDX-License-Identifier: MIT
/*
 * window.c - the profiles of a recording window besides the live heap:
 *
 *  allocs    every sampled allocation seen as an event during the window,
 *            summed per allocation stack (alloc_objects, alloc_space).
 *  lifetime  objects allocated and freed within the window, per pair
 *            (allocation stack, free stack): estimated objects, lifetime
 *            min / mean / max in ns, objects freed by the allocating
 *            thread.  The pair is one combined stack: the free stack
 *            without the outer frames it shares with the allocation stack
 *            (lt_free_frames; at most its innermost HS_LT_FREE_FRAMES),
 *            HS_FREE_MARKER, then the allocation stack, so folded text
 *            reads "alloc root;...;alloc leaf;[free];free frames below
 *            the last shared one;...;free leaf".
 *  peak      a copy of the live heap profile taken when the estimated
 *            in-use total first exceeds the last copy's total by more than
 *            HS_PEAK_RESOLUTION (1%): the copy is within 1% of the highest
 *            total seen since the attach, and at most
 *            log(max/min)/log(1.01) copies are ever taken.
 *
 * Estimates follow DESIGN.md section 1: a sample stands for W/(r+1)
 * objects and a*W/(r+1) bytes.  Lifetime means are weighted by W/(r+1),
 * so they estimate the mean over objects, not over samples.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "profiles.h"
#include "symbolize.h"

struct hs_window {
	uint64_t start_ns; /* CLOCK_MONOTONIC of the attach */
	struct hs_stack_table allocs, lifetime;
	double total;		   /* estimated in-use bytes now */
	double peak_total;	   /* total of the peak copy */
	struct hs_stack_agg *peak; /* copy of the live aggregation */
	size_t npeak;
	uint64_t peak_snapshots;
	bool loading; /* registry load in progress: no peak checks */
};

struct hs_window *hs_window__new(uint64_t start_ns)
{
	struct hs_window *w = calloc(1, sizeof(*w));

	if (w)
		w->start_ns = start_ns;
	return w;
}

void hs_window__free(struct hs_window *w)
{
	if (!w)
		return;
	hs_stack_table__free(&w->allocs);
	hs_stack_table__free(&w->lifetime);
	free(w->peak);
	free(w);
}

void hs_window__loading(struct hs_window *w, bool on)
{
	w->loading = on;
}

int hs_window__alloc_event(struct hs_window *w, const struct hs_sample *s)
{
	struct hs_stack_agg *a = hs_stack_table__get(&w->allocs, s->stack, s->depth);

	if (!a)
		return -ENOMEM;
	a->samples++;
	a->inuse += hs_sample_estimate(s, HS_VALUE_INUSE);
	a->requested += hs_sample_estimate(s, HS_VALUE_REQUESTED);
	a->objects += hs_sample_estimate(s, HS_VALUE_OBJECTS);
	return 0;
}

int hs_window__peak_check(struct hs_window *w, const struct hs_profile *live)
{
	struct hs_stack_agg *aggs;
	size_t n;
	int err;

	if (w->loading || w->total <= 0)
		return 0;
	if (w->peak && w->total <= w->peak_total * (1.0 + HS_PEAK_RESOLUTION))
		return 0;
	err = hs_profile__aggregate(live, &aggs, &n);
	if (err)
		return err;
	free(w->peak);
	w->peak = aggs;
	w->npeak = n;
	w->peak_total = w->total;
	w->peak_snapshots++;
	return 0;
}

int hs_window__live_alloc(struct hs_window *w, const struct hs_sample *s,
			  const struct hs_profile *live)
{
	w->total += hs_sample_estimate(s, HS_VALUE_INUSE);
	return hs_window__peak_check(w, live);
}

/* How many of the free stack's innermost frames the lifetime stack keeps:
 * those below the outermost frames (same return addresses, compared from
 * the root) it shares with the allocation stack, at most
 * HS_LT_FREE_FRAMES.  A stack of HEAPSCOPE_MAX_FRAMES may be cut short of
 * its root, so then nothing is taken as shared. */
static uint32_t lt_free_frames(const uint64_t *fstack, uint32_t fdepth,
			       const uint64_t *astack, uint32_t adepth)
{
	uint32_t shared = 0, keep;

	if (fdepth < HEAPSCOPE_MAX_FRAMES && adepth < HEAPSCOPE_MAX_FRAMES)
		while (shared < fdepth && shared < adepth &&
		       fstack[fdepth - 1 - shared] ==
			       astack[adepth - 1 - shared])
			shared++;
	keep = fdepth - shared;
	return keep < HS_LT_FREE_FRAMES ? keep : HS_LT_FREE_FRAMES;
}

int hs_window__live_free(struct hs_window *w, const struct hs_sample *s,
			 uint64_t free_ns, uint32_t free_tid,
			 const uint64_t *fstack, uint32_t fdepth)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	uint32_t nf, na, depth = 0;
	struct hs_stack_agg *a;
	double objs, lt;

	w->total -= hs_sample_estimate(s, HS_VALUE_INUSE);
	if (w->total < 0)
		w->total = 0;
	/* lifetime: allocated within the window, a sane free time */
	if (!s->time_ns || s->time_ns < w->start_ns || free_ns < s->time_ns)
		return 0;
	nf = lt_free_frames(fstack, fdepth, s->stack, s->depth);
	na = s->depth < HEAPSCOPE_MAX_FRAMES - 1 - nf
		     ? s->depth
		     : HEAPSCOPE_MAX_FRAMES - 1 - nf;
	memcpy(stack, fstack, nf * sizeof(*stack));
	depth = nf;
	stack[depth++] = HS_FREE_MARKER;
	memcpy(stack + depth, s->stack, na * sizeof(*stack));
	depth += na;
	a = hs_stack_table__get(&w->lifetime, stack, depth);
	if (!a)
		return -ENOMEM;
	objs = hs_sample_estimate(s, HS_VALUE_OBJECTS);
	lt = (double)(free_ns - s->time_ns);
	if (!a->samples || lt < a->lt_min)
		a->lt_min = lt;
	if (lt > a->lt_max)
		a->lt_max = lt;
	a->samples++;
	a->objects += objs;
	a->inuse += hs_sample_estimate(s, HS_VALUE_INUSE);
	a->requested += hs_sample_estimate(s, HS_VALUE_REQUESTED);
	a->lt_sum += lt * objs;
	a->lt_weight += objs;
	if (free_tid == s->tid)
		a->same_thread += objs;
	return 0;
}

int hs_window__allocs(const struct hs_window *w, struct hs_stack_agg **out,
		      size_t *n)
{
	return hs_stack_table__copy(&w->allocs, out, n);
}

int hs_window__lifetime(const struct hs_window *w, struct hs_stack_agg **out,
			size_t *n)
{
	return hs_stack_table__copy(&w->lifetime, out, n);
}

int hs_window__peak(const struct hs_window *w, struct hs_stack_agg **out,
		    size_t *n, double *total)
{
	*total = w->peak_total;
	*out = malloc((w->npeak ? w->npeak : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	if (w->npeak) /* no peak yet: w->peak may be NULL */
		memcpy(*out, w->peak, w->npeak * sizeof(**out));
	*n = w->npeak;
	return 0;
}

uint64_t hs_window__peak_snapshots(const struct hs_window *w)
{
	return w->peak_snapshots;
}

const char *hs_window__sym(void *syms, uint64_t addr)
{
	if (addr == HS_FREE_MARKER)
		return "[free]";
	return syms ? hs_syms__name(syms, addr) : NULL;
}

/* Every type sums across samples as pprof sums it: "lifetime" is the
 * objects' total lifetime (Σ c·t, so the mean is lifetime / objects);
 * lifetime_min and _max are per stack, meant for one stack at a time
 * (-peek, -traces, -raw). */
static const char *const lt_names[] = {
	"objects",	       "lifetime", "lifetime_min", "lifetime_max",
	"same_thread_objects", "space",	   "samples",
};
static const char *const lt_units[] = {
	"count", "nanoseconds", "nanoseconds", "nanoseconds",
	"count", "bytes",	"count",
};

static void lt_values(const struct hs_stack_agg *a, int64_t *v)
{
	v[0] = hs_pprof__round(a->objects);
	v[1] = hs_pprof__round(a->lt_sum);
	v[2] = hs_pprof__round(a->lt_min);
	v[3] = hs_pprof__round(a->lt_max);
	v[4] = hs_pprof__round(a->same_thread);
	v[5] = hs_pprof__round(a->inuse);
	v[6] = (int64_t)a->samples;
}

void hs_window__pprof_lifetime(struct hs_pprof_meta *m)
{
	_Static_assert(sizeof(lt_names) == sizeof(lt_units) &&
			       sizeof(lt_names) / sizeof(lt_names[0]) <= HS_PPROF_MAX_TYPES,
		       "a unit per sample type");
	m->ntypes = sizeof(lt_names) / sizeof(lt_names[0]);
	m->type_names = lt_names;
	m->type_units = lt_units;
	m->values = lt_values;
}

int hs_profiles__aggregate(enum hs_profile_kind kind, struct hs_profile *live,
			   const struct hs_window *w, struct hs_stack_agg **out,
			   size_t *n)
{
	double total;

	switch (kind) {
	case HS_PROFILE_ALLOCS:
		return w ? hs_window__allocs(w, out, n) : -EINVAL;
	case HS_PROFILE_LIFETIME:
		return w ? hs_window__lifetime(w, out, n) : -EINVAL;
	case HS_PROFILE_PEAK:
		return w ? hs_window__peak(w, out, n, &total) : -EINVAL;
	case HS_PROFILE_FRAGMENTATION:
		return hs_fragmentation__aggregate(live, out, n);
	case HS_PROFILE_HEAP:
	default:
		return hs_profile__aggregate(live, out, n);
	}
}
