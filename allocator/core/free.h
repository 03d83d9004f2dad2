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

/* Free of a pointer whose pagemap entry s is NULL or a large span: NULL,
 * a pointer in the sampled region (its pages are never in the pagemap:
 * hs_sampled_free, with size_hint), a large block, or a foreign pointer
 * (ignored, one warning per process). */
void hs_free_slow(void *p, hs_span_t *s, size_t size_hint) HS_NOINLINE;
/* Usable size of any pointer; 0 for NULL or foreign pointers. */
size_t hs_usable_size(const void *p);

/*
 * free(p) with an optional size hint (0 = unknown).  The fast path: the
 * pagemap lookup, then a push on the thread cache's list of p's class
 * (hs_tc_push).  The sampled region needs no test of its own here: its
 * pages are never entered in the pagemap, so its pointers read NULL (the
 * empty nodes read NULL, no test on the way) like NULL and foreign
 * pointers.  It hands off:
 *  - no span (p NULL, in the sampled region: a sample, or a large block
 *    the region serves; or foreign), or a large block (class 0):
 *    hs_free_slow, which sends the region's pointers to hs_sampled_free
 *    with the hint (it checks sized frees of samples);
 *  - a list with no room (length >= max_length): hs_tc_overflow takes p
 *    and gives a batch back.  This also catches a thread without a cache
 *    (the read-only hs_tc_empty and hs_tc_dead have max_length 0: p goes
 *    straight to the central list), so nothing writes to them.
 * Before sampling is set up the region is empty (size 0): no pointer is
 * in it.
 */
static inline void hs_free_inline(void *p, size_t size_hint)
{
	hs_span_t *s = hs_pagemap_lookup(p); /* NULL for p == NULL */
	unsigned cls;
	if (HS_UNLIKELY(!s || !(cls = s->size_class))) {
		hs_free_slow(p, s, size_hint);
		return;
	}
	hs_tc_push(cls, p);
}

#endif /* HS_FREE_H */
