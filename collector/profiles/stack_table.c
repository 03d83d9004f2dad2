// SPDX-License-Identifier: MIT
/*
 * stack_table.c - the collector's one table of distinct call stacks: a
 * growable array of struct hs_stack_agg in insertion order, indexed by an
 * open-addressing hash of (depth, frames) with linear probing.  The live
 * set's aggregation (profile.c), the window's allocs and lifetime tables
 * (window.c) and the fragmentation attribution (fragmentation.c) sum into
 * it.  Entries are never removed; the index holds at least twice as many
 * slots as the array can, so a probe always ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"

static size_t hash_stack(const uint64_t *st, uint32_t depth)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ depth;

	for (uint32_t i = 0; i < depth; i++) {
		h ^= st[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return (size_t)h;
}

static bool same(const struct hs_stack_agg *a, const uint64_t *stack,
		 uint32_t depth)
{
	return a->depth == depth &&
	       !memcmp(a->stack, stack, depth * sizeof(*stack));
}

int hs_stack_table__reserve(struct hs_stack_table *t, size_t need)
{
	size_t ncap, nicap, *ni;
	struct hs_stack_agg *na;

	if (need <= t->cap)
		return 0;
	ncap = t->cap ? t->cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	nicap = ncap * 2;
	na = realloc(t->aggs, ncap * sizeof(*na));
	if (!na)
		return -ENOMEM;
	t->aggs = na;
	ni = calloc(nicap, sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	for (size_t k = 0; k < t->n; k++) {
		size_t i = hash_stack(na[k].stack, na[k].depth) & (nicap - 1);

		while (ni[i])
			i = (i + 1) & (nicap - 1);
		ni[i] = k + 1;
	}
	free(t->index);
	t->index = ni;
	t->icap = nicap;
	t->cap = ncap;
	return 0;
}

struct hs_stack_agg *hs_stack_table__find(const struct hs_stack_table *t,
					  const uint64_t *stack, uint32_t depth)
{
	if (!t->icap)
		return NULL;
	for (size_t i = hash_stack(stack, depth) & (t->icap - 1); t->index[i];
	     i = (i + 1) & (t->icap - 1)) {
		struct hs_stack_agg *a = &t->aggs[t->index[i] - 1];

		if (same(a, stack, depth))
			return a;
	}
	return NULL;
}

struct hs_stack_agg *hs_stack_table__get(struct hs_stack_table *t,
					 const uint64_t *stack, uint32_t depth)
{
	struct hs_stack_agg *a;
	size_t i;

	if (depth > HEAPSCOPE_MAX_FRAMES)
		return NULL;
	if (t->n + 1 > t->cap && hs_stack_table__reserve(t, t->n + 1))
		return NULL;
	for (i = hash_stack(stack, depth) & (t->icap - 1); t->index[i];
	     i = (i + 1) & (t->icap - 1)) {
		a = &t->aggs[t->index[i] - 1];
		if (same(a, stack, depth))
			return a;
	}
	a = &t->aggs[t->n++];
	memset(a, 0, sizeof(*a));
	a->depth = depth;
	memcpy(a->stack, stack, depth * sizeof(*stack));
	t->index[i] = t->n;
	return a;
}

int hs_stack_table__copy(const struct hs_stack_table *t,
			 struct hs_stack_agg **out, size_t *n)
{
	*out = malloc((t->n ? t->n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	if (t->n) /* empty table: aggs may be NULL (memcpy's UB) */
		memcpy(*out, t->aggs, t->n * sizeof(**out));
	*n = t->n;
	return 0;
}

int hs_stack_table__take(struct hs_stack_table *t, struct hs_stack_agg **out,
			 size_t *n)
{
	int err = hs_stack_table__reserve(t, 1); /* never hand out NULL */

	if (err) {
		hs_stack_table__free(t);
		return err;
	}
	*out = t->aggs;
	*n = t->n;
	t->aggs = NULL;
	hs_stack_table__free(t);
	return 0;
}

void hs_stack_table__free(struct hs_stack_table *t)
{
	free(t->aggs);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

int hs_stack_table__delta(const struct hs_stack_agg *before, size_t nb,
			  const struct hs_stack_agg *after, size_t na,
			  struct hs_stack_agg **out, size_t *n)
{
	struct hs_stack_table t = {0};

	if (hs_stack_table__reserve(&t, na + nb))
		return -ENOMEM;
	for (size_t i = 0; i < na; i++) {
		struct hs_stack_agg *a =
			hs_stack_table__get(&t, after[i].stack, after[i].depth);

		if (!a)
			goto nomem;
		a->samples += after[i].samples;
		a->inuse += after[i].inuse;
		a->requested += after[i].requested;
		a->objects += after[i].objects;
		a->alloc_space += after[i].alloc_space;
		a->alloc_objects += after[i].alloc_objects;
		a->alloc_samples += after[i].alloc_samples;
	}
	for (size_t i = 0; i < nb; i++) {
		struct hs_stack_agg *a = hs_stack_table__get(
			&t, before[i].stack, before[i].depth);

		if (!a)
			goto nomem;
		a->samples -= before[i].samples;
		a->inuse -= before[i].inuse;
		a->requested -= before[i].requested;
		a->objects -= before[i].objects;
		a->alloc_space -= before[i].alloc_space;
		a->alloc_objects -= before[i].alloc_objects;
		a->alloc_samples -= before[i].alloc_samples;
	}
	return hs_stack_table__take(&t, out, n);
nomem:
	hs_stack_table__free(&t);
	return -ENOMEM;
}
