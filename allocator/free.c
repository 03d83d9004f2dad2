/* SPDX-License-Identifier: MIT */
/*
 * allocator/free.c - free slow paths (NULL, foreign pointers, large
 * spans), hs_free_unsampled for the sampling side, and usable size.
 *
 * A pointer the heap does not own (no span in the pagemap, e.g. a block
 * of the dynamic loader's minimal malloc from before we took over) is
 * ignored, with one warning per process.
 */
#include "alloc.h"
#include "internal.h"
#include "page_heap.h"
#include "stats.h"

static int warned_foreign;

static HS_COLD void foreign_free(void *p)
{
	hs_stat_add(HS_STAT_foreign_free_count, 1);
	if (!__atomic_exchange_n(&warned_foreign, 1, __ATOMIC_RELAXED))
		hs_log("heapscope: free(%p): pointer not allocated by "
		       "heapscope, ignored (warning shown once)",
		       p);
}

HS_NOINLINE void hs_free_slow(void *p, hs_span_t *s)
{
	if (!p)
		return;
	if (!s || s->location != HS_SPAN_IN_USE ||
	    (s->size_class == 0 && p != hs_span_addr(s))) {
		foreign_free(p);
		return;
	}
	if (s->size_class) {
		/* small span (only via hs_free_unsampled callers that
		 * looked the span up early): the normal push */
		hs_free_inline(p, 0);
		return;
	}
	hs_stat_add(HS_STAT_large_bytes, -(int64_t)hs_span_bytes(s));
	hs_stat_add(HS_STAT_large_count, -1);
	hs_page_heap_free(s);
}

void hs_free_unsampled(void *p)
{
	hs_span_t *s = hs_pagemap_lookup(p);
	unsigned cls;
	if (!s || !(cls = s->size_class)) {
		hs_free_slow(p, s);
		return;
	}
	hs_tc_push(cls, p);
}

size_t hs_usable_size(const void *p)
{
	if (!p)
		return 0;
	if (hs_is_sampled(p))
		return hs_sampled_usable_size(p);
	hs_span_t *s = hs_pagemap_lookup(p);
	if (!s || s->location != HS_SPAN_IN_USE)
		return 0;
	if (s->size_class)
		return hs_classes[s->size_class].size;
	return p == hs_span_addr(s) ? hs_span_bytes(s) : 0;
}
