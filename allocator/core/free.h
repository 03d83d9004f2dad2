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

/* Free of a pointer whose pagemap entry carries no class (no span, or a
 * large span): NULL, a pointer in the sampled region (its pages are never
 * in the pagemap: hs_sampled_free, with size_hint), a large block, or a
 * foreign pointer (ignored, one warning per process).  It looks the span
 * up again: keeping the entry alive across the fast path cost it an
 * instruction. */
void hs_free_slow(void *p, size_t size_hint) HS_NOINLINE;
/* Free of p, whose list l of the calling thread's cache has no room:
 * hs_tc_overflow of that cache (reloaded here, so the fast path keeps
 * only l; p first: it stays in the register it came in). */
void hs_free_overflow(void *p, hs_tc_list_t *l) HS_NOINLINE;
/* Free of p, whose pagemap entry's shard bits differ from the calling
 * thread's (x: the entry xor hs_thread.shard_bits): an object of a span
 * of another shard (hs_tc_remote_push), or, from a thread whose shard is
 * not 0, an entry with no class (hs_free_slow, with size_hint). */
void hs_free_remote(void *p, uintptr_t x, size_t size_hint) HS_NOINLINE;
/* Usable size of any pointer; 0 for NULL or foreign pointers. */
size_t hs_usable_size(const void *p);

/*
 * free(p) with an optional size hint (0 = unknown).  The fast path: the
 * pagemap lookup, whose entry carries the class of a small-object span's
 * pages (core/pagemap.h), then a push on the thread cache's list of p's
 * class (hs_tc_try_push).  The sampled region needs no test of its own here:
 * its pages are never entered in the pagemap, so its pointers read NULL (the
 * empty nodes read NULL, no test on the way) like NULL and foreign
 * pointers.  It hands off:
 *  - no class in the entry: no span (p NULL, in the sampled region: a
 *    sample, or a large block the region serves; or foreign), or a large
 *    block:
 *    hs_free_slow, which sends the region's pointers to hs_sampled_free
 *    with the hint (it checks sized frees of samples);
 *  - shard bits in the entry (core/pagemap.h) other than the thread's:
 *    hs_free_remote.  An object of another shard's span (a remote
 *    free) goes to the cache's remote list, kept off the thread's
 *    lists (hs_tc_remote_push); an entry with no class (shard bits 0) from a thread of a
 *    shard other than 0 to hs_free_slow, as below;
 *  - a list with no room (length >= max_length): hs_free_overflow, then
 *    hs_tc_overflow, takes p
 *    and gives a batch back.  This also catches a thread without a cache
 *    (the read-only hs_tc_empty and hs_tc_dead have max_length 0: p goes
 *    straight to the central list), so nothing writes to them.
 * Before sampling is set up the region is empty (size 0): no pointer is
 * in it.
 */
static inline void hs_free_inline(void *p, size_t size_hint)
{
	/* 0 for p == NULL; its low bits xor the thread's shard: 0 for an
	 * object of a span of the thread's shard (core/pagemap.h), the top
	 * bits as they were */
	uintptr_t x = hs_pagemap_entry((uintptr_t)p >> HS_PAGE_SHIFT) ^
		      hs_thread.shard_bits;
	if (HS_UNLIKELY(x & HS_PM_SHARD_MASK)) {
		hs_free_remote(p, x, size_hint);
		return;
	}
	/* the class's list offset, 0 for no class */
	size_t off = hs_pm_entry_list_offset(x);
	if (HS_UNLIKELY(!off)) {
		hs_free_slow(p, size_hint);
		return;
	}
	hs_tc_list_t *l = hs_tc_list_at(hs_thread.tc, off);
	if (HS_UNLIKELY(!hs_tc_try_push(l, p)))
		hs_free_overflow(p, l);
}

#endif /* HS_FREE_H */
