/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/stats.c - the statistics array, its dump, and the mapping to
 * glibc's struct mallinfo2.
 */
#include <malloc.h>

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

static size_t nonneg(int64_t v)
{
	return v > 0 ? (size_t)v : 0;
}

/*
 * mallinfo2 as heapscope sees it (bytes):
 *   arena    heap memory obtained from the OS and not given back
 *            (page heap: reserved minus released; plus the large blocks
 *            in the sampled region)
 *   ordblks  free spans in the page heap
 *   hblks    large allocations in use (page-heap spans, and blocks in
 *            the sampled region: unsampled ones and samples without a
 *            proxy); hblkhd their bytes
 *   uordblks bytes in use: small spans minus central free objects, plus
 *            large allocations (objects cached by threads count as used)
 *   fordblks free bytes: committed free spans + central free objects
 *   keepcost bytes released to the OS and still reserved
 *   smblks, usmblks, fsmblks: 0
 */
void hs_stats_mallinfo2(struct mallinfo2 *mi)
{
	size_t system = nonneg(hs_stat_get(HS_STAT_system_bytes));
	size_t released = nonneg(hs_stat_get(HS_STAT_pageheap_released_bytes));
	size_t small = nonneg(hs_stat_get(HS_STAT_small_span_bytes));
	size_t central = nonneg(hs_stat_get(HS_STAT_central_free_bytes));
	/* large allocations: page-heap spans and blocks in the region */
	size_t large = nonneg(hs_stat_get(HS_STAT_large_bytes)) +
		       nonneg(hs_stat_get(HS_STAT_region_large_bytes));
	size_t pfree = nonneg(hs_stat_get(HS_STAT_pageheap_free_bytes));
	*mi = (struct mallinfo2){0};
	mi->arena = (system > released ? system - released : 0) +
		    nonneg(hs_stat_get(HS_STAT_region_large_bytes));
	mi->ordblks = nonneg(hs_stat_get(HS_STAT_pageheap_free_count));
	mi->hblks = nonneg(hs_stat_get(HS_STAT_large_count)) +
		    nonneg(hs_stat_get(HS_STAT_region_large_count));
	mi->hblkhd = large;
	mi->uordblks = (small > central ? small - central : 0) + large;
	mi->fordblks = pfree + central;
	mi->keepcost = released;
}
