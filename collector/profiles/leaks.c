// SPDX-License-Identifier: MIT
/*
 * leaks.c - the leak-trend store of one process: for each tracked stack,
 * a ring of HS_LEAK_POINTS points of estimated in-use bytes (sum of
 * a*W/(r+1) over its live samples) and of that estimate's sampling
 * variance (hs_leak__sample_var), all stacks on one shared timeline, one
 * point per interval; and the copy of it that the leaks view fits and
 * ranks (with the ages of the live samples, read from the live set at
 * copy time).
 *
 * Bounds: at most HS_LEAK_MAX_STACKS stacks, each 8 bytes a point plus
 * its frames, so a process costs at most HS_LEAK_BYTES_MAX (~410 KiB);
 * a stack's ring is allocated when it starts to be tracked.  When a new
 * stack holds more than the least suspect tracked one (lowest score,
 * then least in use; stacks tracked for fewer than HS_LEAK_FIT_MIN_POINTS
 * points and stacks scoring as a growing site can are kept), it takes
 * that one's place: its history restarts.
 * A point costs one pass over the live set.  Not thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"

struct leak_stack {
	uint32_t depth;
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	uint64_t first; /* absolute index of its first point */
	float *inuse;	/* HS_LEAK_POINTS, ring by absolute index */
	float *var;
	double score; /* at the last point */
};

struct hs_leaks {
	uint64_t interval_ns;
	uint64_t times[HS_LEAK_POINTS]; /* CLOCK_MONOTONIC, ring */
	uint64_t npoints;		/* points ever taken */
	struct leak_stack stacks[HS_LEAK_MAX_STACKS];
	size_t n;
};

_Static_assert(sizeof(struct hs_leaks) + HS_LEAK_MAX_STACKS * 2 *
						 HS_LEAK_POINTS *
						 sizeof(float) <=
		       HS_LEAK_BYTES_MAX,
	       "HS_LEAK_BYTES_MAX bounds a store");

struct hs_leaks *hs_leaks__new(uint64_t interval_ns)
{
	struct hs_leaks *l = calloc(1, sizeof(*l));

	if (l)
		l->interval_ns = interval_ns ? interval_ns : 1;
	return l;
}

void hs_leaks__free(struct hs_leaks *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->stacks[i].inuse);
	free(l);
}

double hs_leaks__window_s(const struct hs_leaks *l)
{
	uint64_t n = l->npoints < HS_LEAK_POINTS ? l->npoints : HS_LEAK_POINTS;

	if (n < 2)
		return 0;
	return (double)(l->times[(l->npoints - 1) % HS_LEAK_POINTS] -
			l->times[(l->npoints - n) % HS_LEAK_POINTS]) /
	       1e9;
}

size_t hs_leaks__bytes(const struct hs_leaks *l)
{
	return sizeof(*l) + l->n * 2 * HS_LEAK_POINTS * sizeof(float);
}

uint64_t hs_leaks__points(const struct hs_leaks *l)
{
	return l->npoints;
}

/* Per distinct stack of the live set, parallel to a stack table's
 * entries (which keep their index). */
struct live_extra {
	double var;
	uint64_t oldest_ns;	    /* smallest time_ns, 0 = none known */
	double age_weight, age_sum; /* bytes, bytes * ns */
};

struct pass {
	struct hs_stack_table t;
	struct live_extra *x;
	size_t xcap;
	int64_t period;
	uint64_t now_ns;
	int err;
};

static void pass_add(void *ctx, const struct hs_sample *s)
{
	struct pass *ps = ctx;
	struct hs_stack_agg *a;
	struct live_extra *x;
	double est;
	size_t i;

	if (ps->err)
		return;
	a = hs_stack_table__get(&ps->t, s->stack, s->depth);
	if (!a) {
		ps->err = -ENOMEM;
		return;
	}
	i = (size_t)(a - ps->t.aggs);
	if (i >= ps->xcap) {
		size_t ncap = ps->xcap ? ps->xcap * 2 : 64;
		struct live_extra *nx;

		while (ncap <= i)
			ncap *= 2;
		nx = realloc(ps->x, ncap * sizeof(*nx));
		if (!nx) {
			ps->err = -ENOMEM;
			return;
		}
		memset(nx + ps->xcap, 0, (ncap - ps->xcap) * sizeof(*nx));
		ps->x = nx;
		ps->xcap = ncap;
	}
	x = &ps->x[i];
	est = hs_sample_estimate(s, HS_VALUE_INUSE);
	a->samples++;
	a->inuse += est;
	x->var += hs_leak__sample_var(s, ps->period);
	/* time_ns is CLOCK_MONOTONIC (base/clock.h), 0 = unknown; a time
	 * ahead of now (read before the sample was made) counts as now */
	if (s->time_ns) {
		uint64_t t = s->time_ns < ps->now_ns ? s->time_ns : ps->now_ns;

		if (!x->oldest_ns || t < x->oldest_ns)
			x->oldest_ns = t;
		x->age_weight += est;
		x->age_sum += est * (double)(ps->now_ns - t);
	}
}

static int pass_run(struct pass *ps, const struct hs_profile *live)
{
	size_t n = hs_profile__live(live);

	if (hs_stack_table__reserve(&ps->t, n ? n : 1))
		return -ENOMEM;
	hs_profile__for_each(live, pass_add, ps);
	return ps->err;
}

static void pass_free(struct pass *ps)
{
	hs_stack_table__free(&ps->t);
	free(ps->x);
}

static const struct live_extra *pass_extra(const struct pass *ps,
					   const struct hs_stack_agg *a)
{
	static const struct live_extra none;
	size_t i = (size_t)(a - ps->t.aggs);

	return i < ps->xcap ? &ps->x[i] : &none;
}

/* Points of stack s held now: from its first, at most the ring. */
static uint64_t held(const struct hs_leaks *l, const struct leak_stack *s)
{
	uint64_t n = l->npoints - s->first;

	return n < HS_LEAK_POINTS ? n : HS_LEAK_POINTS;
}

/* Fit of stack s's held points (t in s from its first held point). */
static void fit_stack(const struct hs_leaks *l, const struct leak_stack *s,
		      struct hs_leak_fit *f, double *t, double *y, double *v)
{
	uint64_t n = held(l, s), from = l->npoints - n;
	uint64_t t0 = l->times[from % HS_LEAK_POINTS];

	for (uint64_t k = 0; k < n; k++) {
		uint64_t abs = from + k;

		t[k] = (double)(l->times[abs % HS_LEAK_POINTS] - t0) / 1e9;
		y[k] = s->inuse[abs % HS_LEAK_POINTS];
		v[k] = s->var[abs % HS_LEAK_POINTS];
	}
	hs_leak__fit(t, y, v, (size_t)n, f);
}

/* Start tracking stack a in slot s (its ring allocated or reused). */
static int track(struct leak_stack *s, const struct hs_stack_agg *a,
		 uint64_t first)
{
	if (!s->inuse) {
		s->inuse = calloc(2 * HS_LEAK_POINTS, sizeof(float));
		if (!s->inuse)
			return -ENOMEM;
		s->var = s->inuse + HS_LEAK_POINTS;
	}
	s->depth = a->depth;
	memcpy(s->stack, a->stack, a->depth * sizeof(a->stack[0]));
	s->first = first;
	s->score = 0;
	return 0;
}

/* The tracked stack to give up for a newcomer holding `inuse` bytes:
 * the lowest score, then the least in use, among those with enough
 * points to be judged; -1 if none holds less than the newcomer. */
static long victim(const struct hs_leaks *l, const double *now_inuse,
		   double inuse)
{
	long best = -1;

	for (size_t i = 0; i < l->n; i++) {
		const struct leak_stack *s = &l->stacks[i];

		/* too new to judge, holding as much, or growing (a growing
		 * site scores at least HS_LEAK_T_MIN * HS_LEAK_AGE_MIN) */
		if (l->npoints - s->first < HS_LEAK_FIT_MIN_POINTS ||
		    now_inuse[i] >= inuse ||
		    s->score >= HS_LEAK_T_MIN * HS_LEAK_AGE_MIN)
			continue;
		if (best < 0 || s->score < l->stacks[best].score ||
		    (s->score == l->stacks[best].score &&
		     now_inuse[i] < now_inuse[best]))
			best = (long)i;
	}
	return best;
}

static int cmp_inuse_desc(const void *a, const void *b)
{
	const struct hs_stack_agg *const *x = a, *const *y = b;

	return (*x)->inuse < (*y)->inuse   ? 1
	       : (*x)->inuse > (*y)->inuse ? -1
					   : 0;
}

/* Newcomers (stacks of the pass not tracked) into free slots, then in
 * place of less suspect ones, the largest first. */
static int admit(struct hs_leaks *l, struct pass *ps, double *now_inuse)
{
	struct hs_stack_agg **nc;
	bool *known;
	size_t nnc = 0;
	int err = 0;

	if (!ps->t.n)
		return 0;
	nc = malloc(ps->t.n * (sizeof(*nc) + sizeof(*known)));
	if (!nc)
		return -ENOMEM;
	known = (bool *)(nc + ps->t.n);
	memset(known, 0, ps->t.n * sizeof(*known));
	for (size_t j = 0; j < l->n; j++) {
		const struct hs_stack_agg *a = hs_stack_table__find(
			&ps->t, l->stacks[j].stack, l->stacks[j].depth);

		if (a)
			known[a - ps->t.aggs] = true;
	}
	for (size_t i = 0; i < ps->t.n; i++)
		if (!known[i])
			nc[nnc++] = &ps->t.aggs[i];
	if (nnc > 1)
		qsort(nc, nnc, sizeof(*nc), cmp_inuse_desc);
	for (size_t k = 0; k < nnc && !err; k++) {
		long slot = l->n < HS_LEAK_MAX_STACKS
				    ? (long)l->n
				    : victim(l, now_inuse, nc[k]->inuse);

		if (slot < 0)
			break; /* sorted: no later one holds more */
		err = track(&l->stacks[slot], nc[k], l->npoints);
		if (!err && (size_t)slot == l->n)
			l->n++;
		if (!err)
			now_inuse[slot] = nc[k]->inuse;
	}
	free(nc);
	return err;
}

int hs_leaks__point(struct hs_leaks *l, const struct hs_profile *live,
		    int64_t period, uint64_t now_ns)
{
	struct pass ps = {.period = period, .now_ns = now_ns};
	double now_inuse[HS_LEAK_MAX_STACKS] = {0}, floor;
	uint64_t slot;
	/* fit buffers, one stack at a time: t, y, v */
	double *fb = malloc(3 * HS_LEAK_POINTS * sizeof(*fb)), *t, *y, *v;
	int err = fb ? pass_run(&ps, live) : -ENOMEM;

	if (err)
		goto out;
	t = fb;
	y = fb + HS_LEAK_POINTS;
	v = fb + 2 * HS_LEAK_POINTS;
	for (size_t i = 0; i < l->n; i++) {
		const struct hs_stack_agg *a = hs_stack_table__find(
			&ps.t, l->stacks[i].stack, l->stacks[i].depth);

		now_inuse[i] = a ? a->inuse : 0;
	}
	err = admit(l, &ps, now_inuse);
	if (err)
		goto out;
	/* A site can hold about one period that no sample shows: the
	 * variance of any point is at least P^2 (1 without a period). */
	floor = period > 0 ? (double)period * (double)period : 1.0;
	slot = l->npoints % HS_LEAK_POINTS;
	l->times[slot] = now_ns;
	for (size_t i = 0; i < l->n; i++) {
		struct leak_stack *s = &l->stacks[i];
		const struct hs_stack_agg *a =
			hs_stack_table__find(&ps.t, s->stack, s->depth);
		double var = a ? pass_extra(&ps, a)->var : 0;

		s->inuse[slot] = (float)(a ? a->inuse : 0);
		s->var[slot] = (float)(var > floor ? var : floor);
	}
	l->npoints++;
	/* scores for the next eviction */
	for (size_t i = 0; i < l->n; i++) {
		struct leak_stack *s = &l->stacks[i];
		const struct hs_stack_agg *a =
			hs_stack_table__find(&ps.t, s->stack, s->depth);
		const struct live_extra *x = a ? pass_extra(&ps, a) : NULL;
		struct hs_leak_fit f;

		fit_stack(l, s, &f, t, y, v);
		s->score = hs_leak__score(
			&f, x && x->oldest_ns
				    ? (double)(now_ns - x->oldest_ns) / 1e9
				    : 0);
	}
out:
	free(fb);
	pass_free(&ps);
	return err;
}

int hs_leaks__tick(struct hs_leaks *l, const struct hs_profile *live,
		   int64_t period, uint64_t now_ns)
{
	if (l->npoints) {
		uint64_t last = l->times[(l->npoints - 1) % HS_LEAK_POINTS];

		if (now_ns - last < l->interval_ns)
			return 0;
	}
	return hs_leaks__point(l, live, period, now_ns);
}

void hs_leak_series__free(struct hs_leak_series *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		free(s[i].t_s);
	free(s);
}

int hs_leaks__copy(const struct hs_leaks *l, const struct hs_profile *live,
		   uint64_t now_ns, struct hs_leak_series **out, size_t *nout)
{
	struct pass ps = {.now_ns = now_ns};
	struct hs_leak_series *ss;
	uint64_t t0;
	int err;

	*out = NULL;
	*nout = 0;
	ss = calloc(l->n ? l->n : 1, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	err = pass_run(&ps, live);
	for (size_t i = 0; !err && i < l->n; i++) {
		const struct leak_stack *s = &l->stacks[i];
		struct hs_leak_series *o = &ss[i];
		uint64_t n = held(l, s), from = l->npoints - n;
		const struct hs_stack_agg *a =
			hs_stack_table__find(&ps.t, s->stack, s->depth);

		o->depth = s->depth;
		memcpy(o->stack, s->stack, s->depth * sizeof(s->stack[0]));
		o->n = (size_t)n;
		o->t_s = malloc((n ? n : 1) * 3 * sizeof(double));
		if (!o->t_s) {
			err = -ENOMEM;
			break;
		}
		o->inuse = o->t_s + n;
		o->var = o->inuse + n;
		/* every series on the store's timeline: t from its first
		 * point held (so series of one store can be summed) */
		t0 = l->times[(l->npoints - (l->npoints < HS_LEAK_POINTS
						     ? l->npoints
						     : HS_LEAK_POINTS)) %
			      HS_LEAK_POINTS];
		for (uint64_t k = 0; k < n; k++) {
			uint64_t abs = (from + k) % HS_LEAK_POINTS;

			o->t_s[k] = (double)(l->times[abs] - t0) / 1e9;
			o->inuse[k] = s->inuse[abs];
			o->var[k] = s->var[abs];
		}
		if (a) {
			const struct live_extra *x = pass_extra(&ps, a);

			o->inuse_now = a->inuse;
			o->samples = a->samples;
			if (x->oldest_ns)
				o->oldest_age_s =
					(double)(now_ns - x->oldest_ns) / 1e9;
			if (x->age_weight > 0)
				o->mean_age_s =
					x->age_sum / x->age_weight / 1e9;
		}
		*nout = i + 1;
	}
	pass_free(&ps);
	if (err) {
		hs_leak_series__free(ss, *nout);
		*nout = 0;
		return err;
	}
	*out = ss;
	*nout = l->n;
	return 0;
}
