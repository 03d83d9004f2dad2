/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/alloc.h - the malloc fast path (inline, used by
 * override.c's exported entry points) and the out-of-line allocation
 * paths (alloc.c) it hands off to.
 */
#ifndef HS_ALLOC_H
#define HS_ALLOC_H

#include <stddef.h>

#include "base/hs_common.h"
#include "core/size_class.h"
#include "core/thread_cache.h"
#include "sampling.h"

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

/*
 * malloc(n) minus errno (NULL on ENOMEM; the slow paths set errno).  The
 * fast path: the sampler's subtraction, the size -> class table, a pop
 * from the thread cache's list.  It hands off:
 *  - the sampler's counter running out (hs_sampler_try_fast false):
 *    hs_alloc_sample_slow, which samples the request or serves it
 *    unsampled.  This also catches a thread's first allocation (the
 *    TLS sampler starts with 0 bytes to go), sampling off (the counter
 *    comes back every 128 MiB for a rate change) and a period change;
 *  - n > HS_MAX_SMALL_SIZE: hs_alloc_slow, a large block (the sampled
 *    region's pool or the page heap, core/large.c);
 *  - an empty list: hs_alloc_slow refills it from the central list.  A
 *    thread without a cache points at the read-only hs_tc_empty, whose
 *    lists are all empty (hs_alloc_slow gives it a cache of its own),
 *    and before the size classes are built every size maps to class 0,
 *    whose list is never filled: no "initialised?" test is needed here,
 *    and the fast path writes only to a list it popped from.
 */
static inline void *hs_malloc_inline(size_t n)
{
	if (HS_UNLIKELY(!hs_sampler_try_fast(&hs_thread.sampler, n)))
		return hs_alloc_sample_slow(n, 0);
	/* the table gives the list's byte offset in the cache: the common
	 * sizes, up to 1 KiB, first, with one compare */
	size_t off;
	if (HS_LIKELY(n <= HS_CLASS_FINE_MAX))
		off = hs_class_table[hs_class_fine_index(n)];
	else if (n <= HS_MAX_SMALL_SIZE)
		off = hs_class_table[hs_class_index(n)];
	else
		return hs_alloc_slow(n);
	hs_tc_list_t *l = hs_tc_list_at(hs_thread.tc, off);
	void *p = l->head;
	if (HS_LIKELY(p != NULL)) {
		l->head = *(void **)p;
		l->length--;
		return p;
	}
	return hs_alloc_slow(n);
}

#endif /* HS_ALLOC_H */
