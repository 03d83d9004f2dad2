/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/alloc.c - allocation slow paths: first use of a thread,
 * thread-cache refill, large requests (handed to core/large.c), aligned
 * requests, and the unsampled entry the sampling side uses
 * (hs_alloc_unsampled).  Also calloc and realloc, which build on the
 * malloc path.
 */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "core/alloc.h"
#include "core/core.h"
#include "core/free.h"
#include "core/init.h"
#include "core/large.h"
#include "core/pagemap.h"

/* Small request of class cls from the calling thread's cache. */
static void *alloc_small(unsigned cls)
{
	hs_tcache_t *tc = hs_thread.tc;
	hs_tc_list_t *l = &tc->lists[cls];
	void *p = l->head;
	if (HS_LIKELY(p != NULL)) {
		l->head = *(void **)p;
		l->length--;
		return p;
	}
	return hs_tc_refill(tc, cls);
}

/* Allocation without the sampler.  align: 0 or a power of two. */
static void *alloc_unsampled(size_t n, size_t align)
{
	if (HS_UNLIKELY(hs_thread.tc->state == HS_TC_EMPTY) &&
	    !hs_tc_activate())
		return NULL;
	if (align <= HS_MIN_ALIGN) {
		if (n <= HS_MAX_SMALL_SIZE)
			return alloc_small(hs_size_to_class(n));
		return hs_large_alloc(n);
	}
	if (align <= HS_PAGE_SIZE) {
		unsigned cls = hs_size_class_aligned(n, align);
		if (cls)
			return alloc_small(cls);
		if (n > HS_MAX_SMALL_SIZE)
			return hs_large_alloc(n);
	}
	return hs_large_alloc_span(n, align);
}

void *hs_alloc_unsampled(size_t size, size_t align)
{
	return alloc_unsampled(size, align);
}

size_t hs_alloc_size_for(size_t size, size_t align)
{
	hs_init_global();
	if (align <= HS_MIN_ALIGN && size <= HS_MAX_SMALL_SIZE)
		return hs_classes[hs_size_to_class(size)].size;
	if (align > HS_MIN_ALIGN && align <= HS_PAGE_SIZE) {
		unsigned cls = hs_size_class_aligned(size, align);
		if (cls)
			return hs_classes[cls].size;
	}
	if (size > HS_LARGE_MAX)
		return 0;
	size_t pages = (size + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT;
	return (pages ? pages : 1) << HS_PAGE_SHIFT;
}

HS_HOT HS_NOINLINE void *hs_alloc_slow(size_t n)
{
	void *p = alloc_unsampled(n, 0);
	if (HS_UNLIKELY(!p))
		errno = ENOMEM;
	return p;
}

HS_HOT HS_NOINLINE void *hs_alloc_sample_slow(size_t n, size_t align)
{
	void *p = hs_sample_alloc_slow(&hs_thread.sampler, n, align);
	if (p)
		return p;
	p = alloc_unsampled(n, align);
	if (HS_UNLIKELY(!p))
		errno = ENOMEM;
	return p;
}

HS_HOT void *hs_alloc_aligned(size_t n, size_t align)
{
	if (align <= HS_MIN_ALIGN)
		return hs_malloc_inline(n);
	if (HS_UNLIKELY(!hs_sampler_try_fast(&hs_thread.sampler, n)))
		return hs_alloc_sample_slow(n, align);
	return alloc_unsampled(n, align);
}

HS_HOT void *hs_calloc(size_t count, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = hs_malloc_inline(n);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	size_t off, len;
	if (n > HS_MAX_SMALL_SIZE && !hs_is_sampled(p)) {
		/* a large span fresh from the OS or released reads as 0 */
		hs_span_t *s = hs_pagemap_lookup(p);
		if (s && s->size_class == 0 && s->zeroed)
			return p;
	} else if (n > HS_MAX_SMALL_SIZE && hs_region_dirty(p, &off, &len)) {
		/* only the pages not fresh or decommitted: clearing the
		 * rest would make them resident */
		if (off < n)
			memset((char *)p + off, 0,
			       len < n - off ? len : n - off);
		return p;
	}
	memset(p, 0, n);
	return p;
}

/* realloc's move of p (old bytes) into a new block of n bytes that later
 * growth can extend in place (hs_large_alloc_growable); a sampled or
 * unplaceable one as any allocation of n.  NULL (ENOMEM) keeps p. */
static void *move_growable(void *p, size_t old, size_t n)
{
	void *q = NULL;

	if (HS_UNLIKELY(!hs_sampler_try_fast(&hs_thread.sampler, n)))
		q = hs_sample_alloc_slow(&hs_thread.sampler, n, 0);
	if (!q)
		q = hs_large_alloc_growable(n);
	if (!q)
		q = alloc_unsampled(n, 0);
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(q, p, old);
	hs_free_inline(p, 0);
	return q;
}

HS_HOT void *hs_realloc(void *p, size_t n)
{
	if (!p) {
		p = hs_malloc_inline(n);
		if (!p)
			errno = ENOMEM;
		return p;
	}
	if (n == 0) {
		hs_free_inline(p, 0);
		return NULL;
	}
	size_t old;
	if (hs_is_sampled(p)) {
		/* A sample or a large unsampled block in the region.  0: not
		 * the start of a live block (freed twice, interior): not
		 * owned, the block is left alone */
		old = hs_sampled_usable_size(p);
		if (!old)
			goto not_owned;
		/* Within its usable size and not shrinking below half: keep
		 * it, as an unsampled block of its class would be kept.
		 * Moving it costs a new allocation (maybe a new sample), a
		 * copy, and a decommit of the sampled pages on free. */
		if (n <= old && n >= old / 2)
			return p;
		/* Growing: the sampler sees n as a new allocation; sampled or
		 * not, the block may stay where it is (its pages grow in
		 * place), else it moves like any other. */
		if (n > old) {
			void *q = NULL;
			if (!hs_sampler_try_fast(&hs_thread.sampler, n)) {
				q = hs_sample_realloc_slow(&hs_thread.sampler,
							   n, p);
				if (q == p)
					return p;
			}
			if (!q && hs_large_region_grow(p, n))
				return p; /* unsampled now, grown in place */
			if (!q && n <= HS_MAX_SMALL_SIZE)
				q = hs_large_alloc_growable(n);
			if (!q)
				q = alloc_unsampled(n, 0);
			if (!q) {
				errno = ENOMEM;
				return NULL;
			}
			memcpy(q, p, old);
			if (old > HS_MAX_SMALL_SIZE)
				hs_region_free_moved(p, q);
			else
				hs_free_inline(p, 0);
			return q;
		}
	} else {
		/* a class in the entry: a small-object span in use (the class
		 * is set before its objects escape and cleared before the span
		 * goes back, core/pagemap.h), so the span is not read */
		uintptr_t e = hs_pagemap_entry((uintptr_t)p >> HS_PAGE_SHIFT);
		unsigned cls = hs_pm_entry_class(e);
		if (cls) {
			old = hs_classes[cls].size;
			/* same class: nothing to do */
			if (n <= HS_MAX_SMALL_SIZE &&
			    hs_size_to_class(n) == cls)
				return p;
			/* grown past its class, and big: a region block,
			 * which the next growth extends in place */
			if (n > old && n >= HS_REGION_GROW_MIN &&
			    n <= HS_MAX_SMALL_SIZE)
				return move_growable(p, old, n);
		} else {
			hs_span_t *s = hs_pm_entry_span(e);
			/* an interior pointer of a large span is not owned
			 * either: copying hs_span_bytes() from it would read
			 * past the span */
			if (!s || s->location != HS_SPAN_IN_USE ||
			    s->size_class || p != hs_span_addr(s))
				goto not_owned;
			old = hs_span_bytes(s);
			/* keep a large block that shrinks by less than half */
			if (n > HS_MAX_SMALL_SIZE && n <= old && n >= old / 2)
				return p;
			/* grow in place into a free neighbour (no copy) */
			if (n > old && n <= HS_LARGE_MAX && hs_large_grow(s, n))
				return p;
		}
	}
	void *q = hs_malloc_inline(n);
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(q, p, old < n ? old : n);
	hs_free_inline(p, 0);
	return q;
not_owned:
	hs_log("heapscope: realloc(%p): pointer not owned by the heap, "
	       "returning NULL",
	       p);
	errno = ENOMEM;
	return NULL;
}
