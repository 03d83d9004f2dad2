/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/large.c - large blocks: the choice of pool (the sampled
 * region's pages or a page-heap span) and the page heap's side of their
 * accounting.  Each pool accounts for the blocks it serves with the one
 * call hs_stat_large() (base/stats.h); the region's side is
 * region/blocks.c.
 *
 * The in-use page-heap large spans are also on one list, the heap map's
 * (hs_heap_map.large_head, abi.h), linked through the spans' next/prev
 * (free while a span is in use), so that a reader outside the process
 * can measure which of their pages are resident (collector/target/
 * heap_map.c).  The list is changed under the page heap's lock, taken a
 * second time after the span is carved: large blocks only, never the
 * small-object fast path.
 */
#include <stddef.h>

#include "base/stats.h"
#include "core/init.h"
#include "core/large.h"
#include "core/page_heap.h"
#include "core/pagemap.h"
#include "sampling.h"

/* The largest block's pages are page numbers the pagemap covers. */
_Static_assert((HS_LARGE_MAX >> HS_PAGE_SHIFT) <= ((size_t)1 << HS_PM_BITS),
	       "HS_LARGE_MAX beyond the pagemap");

void hs_large_init(void)
{
	hs_stats_publish_spans(offsetof(hs_span_t, start),
			       offsetof(hs_span_t, npages),
			       offsetof(hs_span_t, next));
}

void *hs_large_alloc_span(size_t n, size_t align)
{
	if (n > HS_LARGE_MAX)
		return NULL;
	if (!hs_init_global())
		return NULL;
	size_t pages = (n + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT;
	if (pages == 0)
		pages = 1;
	size_t align_pages = align > HS_PAGE_SIZE ? align >> HS_PAGE_SHIFT : 1;
	hs_span_t *s = hs_page_heap_alloc(pages, align_pages);
	if (!s)
		return NULL;
	hs_stat_large(HS_POOL_PAGE_HEAP, (int64_t)hs_span_bytes(s), 1);
	return hs_span_addr(s);
}

/* The page heap's swap on fault-in saw only its own growth: a program
 * whose large blocks (the region's) grew while spans freed by its small
 * ones stayed committed kept both at its peak (lua's tables: peak RSS
 * 62.9 -> 60.4 MiB with this, jq 186.6 -> 185.3, minor faults within
 * 2 %; bench/ab_real_programs.sh, 3 runs).  mimalloc-bench's
 * malloc-large, whose blocks are all the region's, is unchanged. */
static void region_faulted(void)
{
	size_t fresh = hs_region_fresh_bytes();

	if (fresh)
		hs_page_heap_release_on_fault(fresh);
}

void *hs_large_alloc(size_t n)
{
	void *p = hs_region_alloc(n);
	if (!p)
		return hs_large_alloc_span(n, 0);
	region_faulted();
	return p;
}

void *hs_large_alloc_growable(size_t n)
{
	void *p = hs_region_alloc_growable(n);
	if (p)
		region_faulted();
	return p;
}

bool hs_large_region_grow(void *p, size_t n)
{
	if (!hs_region_grow(p, n))
		return false;
	region_faulted();
	return true;
}

bool hs_large_grow(hs_span_t *s, size_t n)
{
	size_t before = hs_span_bytes(s);
	size_t pages = (n + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT;
	if (!hs_page_heap_try_grow(s, pages))
		return false;
	hs_stat_large(HS_POOL_PAGE_HEAP, (int64_t)(hs_span_bytes(s) - before),
		      0);
	return true;
}

void hs_large_free(hs_span_t *s)
{
	hs_stat_large(HS_POOL_PAGE_HEAP, -(int64_t)hs_span_bytes(s), -1);
	hs_page_heap_free(s);
}
