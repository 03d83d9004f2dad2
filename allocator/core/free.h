/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/free.h - the free fast path (inline, used by override.c's
 * exported entry points and by realloc) and the out-of-line paths it
 * hands off to (free.c).
 */
#ifndef HS_FREE_H
#define HS_FREE_H

#include <stddef.h>

#include "base/hs_common.h"
#include "core/pagemap.h"
#include "core/thread_cache.h"
#include "sampling.h"

/* ---- free.c ---- */

/* Free of a NULL, foreign or large pointer (s = pagemap entry). */
void hs_free_slow(void *p, hs_span_t *s) HS_NOINLINE;
/* Usable size of any pointer; 0 for NULL or foreign pointers. */
size_t hs_usable_size(const void *p);

/*
 * The core's free of p, not in the sampled region: pagemap lookup, then
 * a push on the thread cache's list of p's class (hs_tc_push).  It hands
 * off:
 *  - p NULL, foreign (no span: the pagemap's empty nodes read NULL, no
 *    test on the way), or a large block (class 0): hs_free_slow;
 *  - a list with no room (length >= max_length): hs_tc_overflow takes p
 *    and gives a batch back.  This also catches a thread without a cache
 *    (the read-only hs_tc_empty and hs_tc_dead have max_length 0: p goes
 *    straight to the central list), so nothing writes to them.
 * It assumes p is not in the sampled region (hs_free_inline tests that).
 */
static inline void hs_free_core(void *p)
{
	hs_span_t *s = hs_pagemap_lookup(p); /* NULL for p == NULL */
	unsigned cls;
	if (HS_UNLIKELY(!s || !(cls = s->size_class))) {
		hs_free_slow(p, s);
		return;
	}
	hs_tc_push(cls, p);
}

/*
 * free(p) with an optional size hint (0 = unknown).  The fast path: one
 * compare for the sampled region, then hs_free_core.  It hands off:
 *  - p in the sampled region (a sample, or a large block the region
 *    serves): hs_sampled_free, with the hint, which checks sized frees
 *    of samples;
 *  - everything hs_free_core hands off.
 * Before sampling is set up the region is empty (size 0): no pointer is
 * in it.
 */
static inline void hs_free_inline(void *p, size_t size_hint)
{
	if (HS_UNLIKELY(hs_is_sampled(p))) {
		hs_sampled_free(p, size_hint);
		return;
	}
	hs_free_core(p);
}

#endif /* HS_FREE_H */
