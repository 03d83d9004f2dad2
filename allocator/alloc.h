/* SPDX-License-Identifier: MIT */
/*
 * allocator/alloc.h - the allocation and free fast paths (inline, used by
 * override.c's exported entry points) and the out-of-line slow paths
 * they call (alloc.c, free.c).
 *
 * malloc fast path: sampler subtraction, size -> class table lookup,
 * thread-cache pop.  free fast path: sampled-region compare, pagemap
 * lookup, thread-cache push.  Everything else is out of line.
 *
 * Handed off by malloc: the sampler's counter underflows (a sample, or a
 * thread's first malloc: the counter starts at 0), a large size, an empty
 * list (a refill, or a thread without a cache: hs_tc_empty's lists are
 * empty).  By free: a pointer in the sampled region, NULL, foreign or
 * large pointers, a list with no room (overflow, or a thread without a
 * cache: hs_tc_empty's and hs_tc_dead's max_length is 0).
 */
#ifndef HS_ALLOC_H
#define HS_ALLOC_H

#include <stddef.h>

#include "hs_common.h"
#include "pagemap.h"
#include "sampling.h"
#include "size_class.h"
#include "thread_cache.h"

/* ---- alloc.c ---- */

/* The sampler said "maybe sample" for (n, align): asks the sampling side,
 * serves the request unsampled when it declines.  NULL with errno ENOMEM
 * on failure (so malloc can tail-call it). */
void *hs_alloc_sample_slow(size_t n, size_t align) HS_NOINLINE;
/* Everything the malloc fast path does not handle, without the sampler:
 * first use, empty thread-cache list, large sizes.  NULL with errno
 * ENOMEM on failure. */
void *hs_alloc_slow(size_t n) HS_NOINLINE;
/* Allocation with an alignment (power of two), sampler included.  NULL on
 * ENOMEM. */
void *hs_alloc_aligned(size_t n, size_t align);
/* realloc / calloc semantics (errno set to ENOMEM on failure). */
void *hs_realloc(void *p, size_t n);
void *hs_calloc(size_t count, size_t size);

/* ---- free.c ---- */

/* Free of a NULL, foreign or large pointer (s = pagemap entry). */
void hs_free_slow(void *p, hs_span_t *s) HS_NOINLINE;
/* Usable size of any pointer; 0 for NULL or foreign pointers. */
size_t hs_usable_size(const void *p);

/* malloc(n) minus errno: NULL on ENOMEM. */
static inline void *hs_malloc_inline(size_t n)
{
	if (HS_UNLIKELY(!hs_sampler_try_fast(&hs_thread.sampler, n)))
		return hs_alloc_sample_slow(n, 0);
	if (HS_LIKELY(n <= HS_MAX_SMALL_SIZE)) {
		hs_tc_list_t *l = &hs_thread.tc->lists[hs_size_to_class(n)];
		void *p = l->head;
		if (HS_LIKELY(p != NULL)) {
			l->head = *(void **)p;
			l->length--;
			return p;
		}
	}
	return hs_alloc_slow(n);
}

/* free(p) with an optional size hint (0 = unknown). */
static inline void hs_free_inline(void *p, size_t size_hint)
{
	if (HS_UNLIKELY(hs_is_sampled(p))) {
		hs_sampled_free(p, size_hint);
		return;
	}
	hs_span_t *s = hs_pagemap_lookup(p); /* NULL for p == NULL */
	unsigned cls;
	if (HS_UNLIKELY(!s || !(cls = s->size_class))) {
		hs_free_slow(p, s);
		return;
	}
	hs_tc_push(cls, p);
}

#endif /* HS_ALLOC_H */
