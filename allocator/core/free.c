/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/free.c - free slow paths (NULL, the sampled region,
 * foreign pointers, large spans), hs_free_unsampled for the sampling
 * side, and usable size.
 *
 * A pointer the heap does not own (no span in the pagemap, e.g. a block
 * of the dynamic loader's minimal malloc from before we took over) is
 * ignored, with one warning per process.
 */
#include "base/assert.h"
#include "base/log.h"
#include "base/stats.h"
#include "core/core.h"
#include "core/free.h"
#include "core/large.h"

static int warned_foreign;

static HS_COLD void foreign_free(void *p)
{
	hs_stat_add(HS_STAT_foreign_free_count, 1);
	if (!__atomic_exchange_n(&warned_foreign, 1, __ATOMIC_RELAXED))
		hs_log("heapscope: free(%p): pointer not allocated by "
		       "heapscope, ignored (warning shown once)",
		       p);
}

HS_HOT HS_NOINLINE void hs_free_slow(void *p, size_t size_hint)
{
	if (!p)
		return;
	hs_span_t *s = hs_pagemap_lookup(p);
	if (!s && hs_is_sampled(p)) {
		hs_sampled_free(p, size_hint);
		return;
	}
	/* both callers send a small span's objects to the thread cache */
	hs_assert_internal(!s || s->size_class == 0);
	if (!s || s->location != HS_SPAN_IN_USE || p != hs_span_addr(s)) {
		foreign_free(p);
		return;
	}
	hs_large_free(s);
}

HS_HOT HS_NOINLINE void hs_free_overflow(void *p, hs_tc_list_t *l)
{
	hs_tcache_t *tc = hs_thread.tc;
	hs_tc_overflow(tc, (unsigned)(l - tc->lists), p);
}

HS_HOT HS_NOINLINE void hs_free_remote(void *p, uintptr_t x, size_t size_hint)
{
	/* x: p's entry xor the thread's shard word; its class bits are the
	 * entry's */
	unsigned cls = hs_pm_entry_class(x);
	if (HS_UNLIKELY(!cls)) {
		hs_free_slow(p, size_hint);
		return;
	}
	hs_tc_remote_push(hs_thread.tc, cls,
			  (unsigned)((x ^ hs_thread.shard_bits) &
				     HS_PM_SHARD_MASK),
			  p);
}

void hs_free_unsampled(void *p)
{
	hs_assert_internal(!hs_is_sampled(p));
	hs_free_inline(p, 0);
}

size_t hs_usable_size(const void *p)
{
	if (!p)
		return 0;
	if (hs_is_sampled(p))
		return hs_sampled_usable_size(p);
	/* a class in the entry: a small-object span in use (core/pagemap.h);
	 * its size without reading the span */
	uintptr_t e = hs_pagemap_entry((uintptr_t)p >> HS_PAGE_SHIFT);
	if (hs_pm_entry_class(e))
		return hs_classes[hs_pm_entry_class(e)].size;
	hs_span_t *s = hs_pm_entry_span(e);
	if (!s || s->location != HS_SPAN_IN_USE || s->size_class)
		return 0;
	return p == hs_span_addr(s) ? hs_span_bytes(s) : 0;
}
