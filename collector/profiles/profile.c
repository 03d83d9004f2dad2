// SPDX-License-Identifier: MIT
/*
 * profile.c - the live set of sampled allocations, keyed by record id (seq),
 * and its aggregation per call stack.
 *
 * The live set merges two sources that overlap: registry records read after
 * the attach and ring-buffer events.  An alloc already live is a duplicate;
 * a free whose alloc was not seen yet leaves a tombstone that cancels the
 * alloc if it arrives later, so nothing is double counted or resurrected.
 * Samples of compatible probes (no record id) get a made-up id and a
 * second index by pointer, so their frees (pointer only) find them.
 * Tables: open addressing, linear probing, backward-shift deletion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"

struct slot {
	uint64_t seq;	     /* 0 = empty */
	struct hs_sample *s; /* NULL = tombstone (freed before seen) */
};

/* Pointer index of compatible samples: ptr -> record id. */
struct pslot {
	uint64_t ptr; /* 0 = empty */
	uint64_t seq;
};

struct hs_profile {
	struct slot *slots;
	size_t cap;  /* power of two */
	size_t used; /* live + tombstones */
	size_t live;
	uint64_t seq_min, seq_max, seq_seen; /* event seq range, for gaps */
	struct pslot *pslots; /* NULL until the first compatible sample */
	size_t pcap, pused;   /* power of two; entries */
	uint64_t next_compat; /* made-up record ids handed out */
};

static size_t hash_seq(uint64_t seq)
{
	seq ^= seq >> 33;
	seq *= 0xff51afd7ed558ccdULL;
	seq ^= seq >> 33;
	return (size_t)seq;
}

struct hs_profile *hs_profile__new(void)
{
	struct hs_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cap = 1024;
	p->slots = calloc(p->cap, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		return NULL;
	}
	return p;
}

void hs_profile__reset(struct hs_profile *p)
{
	for (size_t i = 0; i < p->cap; i++) {
		free(p->slots[i].s);
		p->slots[i].s = NULL;
		p->slots[i].seq = 0;
	}
	p->used = p->live = 0;
	p->seq_min = p->seq_max = p->seq_seen = 0;
	if (p->pslots)
		memset(p->pslots, 0, p->pcap * sizeof(*p->pslots));
	p->pused = 0;
}

void hs_profile__free(struct hs_profile *p)
{
	if (!p)
		return;
	hs_profile__reset(p);
	free(p->slots);
	free(p->pslots);
	free(p);
}

static struct slot *lookup(const struct hs_profile *p, uint64_t seq)
{
	size_t mask = p->cap - 1;

	for (size_t i = hash_seq(seq) & mask;; i = (i + 1) & mask) {
		if (p->slots[i].seq == seq)
			return &p->slots[i];
		if (!p->slots[i].seq)
			return NULL;
	}
}

static void put(struct slot *slots, size_t cap, uint64_t seq,
		struct hs_sample *s)
{
	size_t mask = cap - 1;
	size_t i = hash_seq(seq) & mask;

	while (slots[i].seq)
		i = (i + 1) & mask;
	slots[i].seq = seq;
	slots[i].s = s;
}

static int grow(struct hs_profile *p)
{
	size_t ncap = p->cap * 2;
	struct slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i].seq)
			put(ns, ncap, p->slots[i].seq, p->slots[i].s);
	free(p->slots);
	p->slots = ns;
	p->cap = ncap;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without markers. */
static void erase(struct hs_profile *p, struct slot *victim)
{
	size_t mask = p->cap - 1;
	size_t hole = (size_t)(victim - p->slots);

	for (size_t j = (hole + 1) & mask; p->slots[j].seq;
	     j = (j + 1) & mask) {
		size_t home = hash_seq(p->slots[j].seq) & mask;

		/* Move j into the hole unless its home lies in (hole, j]. */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			p->slots[hole] = p->slots[j];
			hole = j;
		}
	}
	p->slots[hole].seq = 0;
	p->slots[hole].s = NULL;
	p->used--;
}

static int insert(struct hs_profile *p, uint64_t seq, struct hs_sample *s)
{
	int err;

	if ((p->used + 1) * 4 > p->cap * 3) {
		err = grow(p);
		if (err)
			return err;
	}
	put(p->slots, p->cap, seq, s);
	p->used++;
	return 0;
}

int hs_profile__alloc(struct hs_profile *p, const struct hs_sample *s)
{
	struct hs_sample *copy;
	struct slot *sl;
	int err;

	if (!s->seq || s->depth > HEAPSCOPE_MAX_FRAMES)
		return -EINVAL;
	sl = lookup(p, s->seq);
	if (sl) {
		if (!sl->s)
			erase(p, sl); /* freed before we saw it: cancel */
		return 1;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *s;
	err = insert(p, s->seq, copy);
	if (err) {
		free(copy);
		return err;
	}
	p->live++;
	return 0;
}

/* ------------------------------------------------ pointer index */

static size_t hash_ptr(uint64_t ptr)
{
	return hash_seq(ptr >> 4);
}

static struct pslot *plookup(const struct hs_profile *p, uint64_t ptr)
{
	size_t mask = p->pcap - 1;

	if (!p->pslots)
		return NULL;
	for (size_t i = hash_ptr(ptr) & mask;; i = (i + 1) & mask) {
		if (p->pslots[i].ptr == ptr)
			return &p->pslots[i];
		if (!p->pslots[i].ptr)
			return NULL;
	}
}

static void pput(struct pslot *ps, size_t cap, uint64_t ptr, uint64_t seq)
{
	size_t mask = cap - 1, i = hash_ptr(ptr) & mask;

	while (ps[i].ptr)
		i = (i + 1) & mask;
	ps[i].ptr = ptr;
	ps[i].seq = seq;
}

static int pinsert(struct hs_profile *p, uint64_t ptr, uint64_t seq)
{
	if (!p->pslots || (p->pused + 1) * 4 > p->pcap * 3) {
		size_t ncap = p->pslots ? p->pcap * 2 : 1024;
		struct pslot *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; p->pslots && i < p->pcap; i++)
			if (p->pslots[i].ptr)
				pput(ns, ncap, p->pslots[i].ptr,
				     p->pslots[i].seq);
		free(p->pslots);
		p->pslots = ns;
		p->pcap = ncap;
	}
	pput(p->pslots, p->pcap, ptr, seq);
	p->pused++;
	return 0;
}

static void perase(struct hs_profile *p, struct pslot *victim)
{
	size_t mask = p->pcap - 1;
	size_t hole = (size_t)(victim - p->pslots);

	for (size_t j = (hole + 1) & mask; p->pslots[j].ptr;
	     j = (j + 1) & mask) {
		size_t home = hash_ptr(p->pslots[j].ptr) & mask;

		if (((j - home) & mask) >= ((j - hole) & mask)) {
			p->pslots[hole] = p->pslots[j];
			hole = j;
		}
	}
	p->pslots[hole].ptr = 0;
	p->pslots[hole].seq = 0;
	p->pused--;
}

int hs_profile__alloc_ptr(struct hs_profile *p, struct hs_sample *s)
{
	uint64_t seq;
	int err;

	if (!(s->flags & HS_SAMPLE_COMPAT) || !s->ptr ||
	    s->depth > HEAPSCOPE_MAX_FRAMES)
		return -EINVAL;
	if (plookup(p, s->ptr))
		return -EEXIST;
	seq = HS_COMPAT_SEQ_BASE + ++p->next_compat;
	s->seq = seq;
	err = pinsert(p, s->ptr, seq);
	if (err)
		return err;
	err = hs_profile__alloc(p, s);
	if (err) {
		perase(p, plookup(p, s->ptr));
		return err < 0 ? err : -EEXIST;
	}
	return 0;
}

uint64_t hs_profile__ptr_seq(const struct hs_profile *p, uint64_t ptr)
{
	const struct pslot *ps = ptr ? plookup(p, ptr) : NULL;

	return ps ? ps->seq : 0;
}

int hs_profile__free_seq(struct hs_profile *p, uint64_t alloc_seq)
{
	struct slot *sl;
	int err;

	if (!alloc_seq)
		return -EINVAL;
	sl = lookup(p, alloc_seq);
	if (sl) {
		if (!sl->s)
			return 1; /* second free of the same record: ignore */
		if (sl->s->flags & HS_SAMPLE_COMPAT) {
			struct pslot *ps = plookup(p, sl->s->ptr);

			if (ps && ps->seq == alloc_seq)
				perase(p, ps);
		}
		free(sl->s);
		erase(p, sl);
		p->live--;
		return 0;
	}
	err = insert(p, alloc_seq, NULL);
	return err ? err : 1;
}

const struct hs_sample *hs_profile__get(const struct hs_profile *p,
					uint64_t seq)
{
	const struct slot *sl = seq ? lookup(p, seq) : NULL;

	return sl ? sl->s : NULL;
}

void hs_profile__note_seq(struct hs_profile *p, uint64_t seq)
{
	if (!seq)
		return;
	if (!p->seq_seen || seq < p->seq_min)
		p->seq_min = seq;
	if (!p->seq_seen || seq > p->seq_max)
		p->seq_max = seq;
	p->seq_seen++;
}

uint64_t hs_profile__seq_lost(const struct hs_profile *p)
{
	uint64_t span;

	if (!p->seq_seen)
		return 0;
	span = p->seq_max - p->seq_min + 1;
	/* Duplicated seqs (a broken target) could exceed the span. */
	return span > p->seq_seen ? span - p->seq_seen : 0;
}

size_t hs_profile__live(const struct hs_profile *p)
{
	return p->live;
}

void hs_profile__for_each(const struct hs_profile *p,
			  void (*fn)(void *ctx, const struct hs_sample *s),
			  void *ctx)
{
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i].seq && p->slots[i].s)
			fn(ctx, p->slots[i].s);
}

double hs_sample_estimate(const struct hs_sample *s, enum hs_value v)
{
	/* DESIGN.md section 1: W counts units of (r + 1). */
	double per = (double)s->weight / ((double)s->requested + 1.0);

	/* Compatible probes: the weight is the estimated bytes itself
	 * (abi.h); objects = weight / size. */
	if (s->flags & HS_SAMPLE_COMPAT) {
		if (v == HS_VALUE_OBJECTS)
			return s->requested ? (double)s->weight /
						      (double)s->requested
					    : 0.0;
		return (double)s->weight;
	}

	switch (v) {
	case HS_VALUE_REQUESTED:
		return (double)s->requested * per;
	case HS_VALUE_OBJECTS:
		return per;
	case HS_VALUE_INUSE:
	default:
		return (double)s->allocated * per;
	}
}

double hs_agg_value(const struct hs_stack_agg *a, enum hs_value v)
{
	switch (v) {
	case HS_VALUE_REQUESTED:
		return a->requested;
	case HS_VALUE_OBJECTS:
		return a->objects;
	case HS_VALUE_RESIDENT:
		return a->resident;
	case HS_VALUE_SWAPPED:
		return a->swapped;
	case HS_VALUE_NOT_RESIDENT:
		return a->not_resident;
	case HS_VALUE_HUGE:
		return a->huge;
	case HS_VALUE_LIFETIME_MEAN:
		return a->lt_weight > 0 ? a->lt_sum / a->lt_weight : 0;
	case HS_VALUE_LIFETIME_MIN:
		return a->lt_min;
	case HS_VALUE_LIFETIME_MAX:
		return a->lt_max;
	case HS_VALUE_LIFETIME_SUM:
		return a->lt_sum;
	case HS_VALUE_SAME_THREAD:
		return a->same_thread;
	case HS_VALUE_FRAGMENTATION:
		return a->frag;
	case HS_VALUE_ALLOC_SPACE:
		return a->alloc_space;
	case HS_VALUE_ALLOC_OBJECTS:
		return a->alloc_objects;
	case HS_VALUE_FRAGMENTATION_AGE:
		return a->frag_age;
	case HS_VALUE_INUSE:
	default:
		return a->inuse;
	}
}

int hs_profile__samples(struct hs_profile *p, struct hs_sample ***out,
			size_t *n)
{
	struct hs_sample **arr = malloc((p->live ? p->live : 1) * sizeof(*arr));
	size_t k = 0;

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap && k < p->live; i++)
		if (p->slots[i].seq && p->slots[i].s)
			arr[k++] = p->slots[i].s;
	*out = arr;
	*n = k;
	return 0;
}

/* Aggregation: the samples summed per stack in a stack table. */
struct agg_state {
	struct hs_stack_table *t;
	int err;
};

static void agg_add(void *ctx, const struct hs_sample *s)
{
	struct agg_state *st = ctx;
	struct hs_stack_agg *a;

	if (st->err)
		return;
	a = hs_stack_table__get(st->t, s->stack, s->depth);
	if (!a) {
		st->err = -ENOMEM;
		return;
	}
	a->samples++;
	a->inuse += hs_sample_estimate(s, HS_VALUE_INUSE);
	a->requested += hs_sample_estimate(s, HS_VALUE_REQUESTED);
	a->objects += hs_sample_estimate(s, HS_VALUE_OBJECTS);
	if (s->res.valid) {
		double inuse = hs_sample_estimate(s, HS_VALUE_INUSE);

		/* docs/profiles.md: each sample's page fractions, scaled by
		 * its estimate a*W/(r+1) */
		a->res_samples++;
		a->resident +=
			inuse * hs_res_fraction(&s->res, HS_VALUE_RESIDENT);
		a->swapped +=
			inuse * hs_res_fraction(&s->res, HS_VALUE_SWAPPED);
		a->not_resident +=
			inuse * hs_res_fraction(&s->res, HS_VALUE_NOT_RESIDENT);
		a->huge += inuse * hs_res_fraction(&s->res, HS_VALUE_HUGE);
	}
}

int hs_profile__aggregate_into(const struct hs_profile *p,
			       struct hs_stack_table *t)
{
	struct agg_state st = {.t = t};

	/* at most one entry per live sample: no growth while adding */
	if (hs_stack_table__reserve(t, t->n + (p->live ? p->live : 1)))
		return -ENOMEM;
	hs_profile__for_each(p, agg_add, &st);
	return st.err;
}

int hs_profile__aggregate(const struct hs_profile *p, struct hs_stack_agg **out,
			  size_t *n)
{
	struct hs_stack_table t = {0};
	int err = hs_profile__aggregate_into(p, &t);

	if (err) {
		hs_stack_table__free(&t);
		return err;
	}
	return hs_stack_table__take(&t, out, n);
}

int hs_alloc_totals__add(struct hs_stack_table *t, const struct hs_sample *s)
{
	struct hs_stack_agg *a = hs_stack_table__get(t, s->stack, s->depth);

	if (!a)
		return -ENOMEM;
	a->alloc_samples++;
	a->alloc_space += hs_sample_estimate(s, HS_VALUE_INUSE);
	a->alloc_objects += hs_sample_estimate(s, HS_VALUE_OBJECTS);
	return 0;
}

int hs_profile__aggregate_heap(const struct hs_profile *p,
			       const struct hs_stack_table *totals,
			       struct hs_stack_agg **out, size_t *n)
{
	struct hs_stack_table t = {0};
	int err = hs_profile__aggregate_into(p, &t);

	for (size_t i = 0; !err && totals && i < totals->n; i++) {
		const struct hs_stack_agg *src = &totals->aggs[i];
		struct hs_stack_agg *a =
			hs_stack_table__get(&t, src->stack, src->depth);

		if (!a) {
			err = -ENOMEM;
			break;
		}
		a->alloc_space = src->alloc_space;
		a->alloc_objects = src->alloc_objects;
		a->alloc_samples = src->alloc_samples;
	}
	if (err) {
		hs_stack_table__free(&t);
		return err;
	}
	return hs_stack_table__take(&t, out, n);
}
