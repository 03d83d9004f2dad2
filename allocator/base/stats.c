/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/stats.c - the statistics array, its dump, and the heap's
 * derived figures (stats.h), the one place they are computed.
 */
#include "base/log.h"
#include "base/stats.h"

int64_t hs_stats[HS_STAT_COUNT];

static const char *const stat_names[HS_STAT_COUNT] = {
#define HS_STAT_NAME(name, desc) #name,
	HS_STATS_LIST(HS_STAT_NAME)
#undef HS_STAT_NAME
};

void hs_stats_print(void)
{
	for (int i = 0; i < HS_STAT_COUNT; i++)
		hs_log("heapscope: %s %ld", stat_names[i],
		       (long)hs_stat_get((enum hs_stat_id)i));
}

static uint64_t nonneg(enum hs_stat_id id)
{
	int64_t v = hs_stat_get(id);

	return v > 0 ? (uint64_t)v : 0;
}

void hs_stats_heap(struct hs_heap_figures *f)
{
	uint64_t system = nonneg(HS_STAT_system_bytes);
	uint64_t released = nonneg(HS_STAT_pageheap_released_bytes);
	uint64_t small = nonneg(HS_STAT_small_span_bytes);
	uint64_t central = nonneg(HS_STAT_central_free_bytes);

	f->large = nonneg(HS_STAT_pageheap_large_bytes) +
		   nonneg(HS_STAT_region_large_bytes);
	f->large_count = nonneg(HS_STAT_pageheap_large_count) +
			 nonneg(HS_STAT_region_large_count);
	f->in_use = (small > central ? small - central : 0) + f->large;
	f->arena = (system > released ? system - released : 0) +
		   nonneg(HS_STAT_region_large_bytes);
	f->pageheap_free = nonneg(HS_STAT_pageheap_free_bytes);
	f->pageheap_released = released;
	f->central_free = central;
	f->free = f->pageheap_free + central;
	f->free_spans = nonneg(HS_STAT_pageheap_free_count);
	f->released_total = nonneg(HS_STAT_released_total_bytes);
	f->system = system;
	f->meta = nonneg(HS_STAT_meta_bytes);
}
