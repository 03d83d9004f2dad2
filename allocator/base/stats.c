/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/stats.c - the statistics array (inside the exported
 * block `heapscope_stats`, abi.h), its dump, and the heap's derived
 * figures (stats.h), the one place they are computed.
 */
#include "base/hs_common.h"
#include "base/log.h"
#include "base/stats.h"

struct heapscope_heap_map hs_heap_map = {
	.magic = HEAPSCOPE_HEAP_MAP_MAGIC,
	.version = HEAPSCOPE_HEAP_MAP_VERSION,
	.size = sizeof(struct heapscope_heap_map),
	.page_shift = HS_PAGE_SHIFT,
};

struct heapscope_stats_block hs_stats_block = {
	.magic = HEAPSCOPE_STATS_MAGIC,
	.version = HEAPSCOPE_STATS_VERSION,
	.header_size = sizeof(struct heapscope_stats_block),
	.value_count = HS_STAT_COUNT,
	.heap_map = (uint64_t)(uintptr_t)&hs_heap_map,
};
/* The export: same object, default visibility. */
HS_EXPORT extern struct heapscope_stats_block heapscope_stats
	__attribute__((alias("hs_stats_block")));

/* The list's order is the ABI's numbering (version 1). */
#define HS_PIN_ABI(name, upper)                                                \
	_Static_assert((int)HS_STAT_##name == (int)HEAPSCOPE_STAT_##upper,     \
		       "stats list and abi.h numbering differ at " #name);
HS_PIN_ABI(system_bytes, SYSTEM_BYTES)
HS_PIN_ABI(meta_bytes, META_BYTES)
HS_PIN_ABI(pageheap_free_bytes, PAGEHEAP_FREE_BYTES)
HS_PIN_ABI(pageheap_released_bytes, PAGEHEAP_RELEASED_BYTES)
HS_PIN_ABI(pageheap_free_count, PAGEHEAP_FREE_COUNT)
HS_PIN_ABI(small_span_bytes, SMALL_SPAN_BYTES)
HS_PIN_ABI(central_free_bytes, CENTRAL_FREE_BYTES)
HS_PIN_ABI(pageheap_large_bytes, PAGEHEAP_LARGE_BYTES)
HS_PIN_ABI(pageheap_large_count, PAGEHEAP_LARGE_COUNT)
HS_PIN_ABI(region_large_bytes, REGION_LARGE_BYTES)
HS_PIN_ABI(region_large_count, REGION_LARGE_COUNT)
HS_PIN_ABI(pageheap_merge_count, PAGEHEAP_MERGE_COUNT)
HS_PIN_ABI(release_calls_count, RELEASE_CALLS_COUNT)
HS_PIN_ABI(released_total_bytes, RELEASED_TOTAL_BYTES)
HS_PIN_ABI(foreign_free_count, FOREIGN_FREE_COUNT)
HS_PIN_ABI(span_waste_bytes, SPAN_WASTE_BYTES)
HS_PIN_ABI(sampled_large_bytes, SAMPLED_LARGE_BYTES)
HS_PIN_ABI(meta_used_bytes, META_USED_BYTES)
HS_PIN_ABI(samples_total, SAMPLES_TOTAL)
HS_PIN_ABI(frees_total, FREES_TOTAL)
HS_PIN_ABI(dropped_total, DROPPED_TOTAL)
HS_PIN_ABI(invalid_frees_total, INVALID_FREES_TOTAL)
HS_PIN_ABI(live, LIVE)
HS_PIN_ABI(pages_bytes, PAGES_BYTES)
HS_PIN_ABI(proxy_bytes, PROXY_BYTES)
HS_PIN_ABI(record_bytes, RECORD_BYTES)
HS_PIN_ABI(inuse_estimate, INUSE_ESTIMATE)
HS_PIN_ABI(fragmentation_estimate, FRAGMENTATION_ESTIMATE)
HS_PIN_ABI(region_bytes, REGION_BYTES)
HS_PIN_ABI(mismatched_frees_total, MISMATCHED_FREES_TOTAL)
HS_PIN_ABI(cached_bytes, CACHED_BYTES)
HS_PIN_ABI(recycled_bytes_total, RECYCLED_BYTES_TOTAL)
#undef HS_PIN_ABI
_Static_assert((int)HS_STAT_COUNT == (int)HEAPSCOPE_STAT_V1_COUNT,
	       "a new statistic: append it to abi.h's numbering too");

void hs_stats_publish_tcache(uint64_t head, uint64_t count,
			     uint32_t next_offset, uint32_t lists_offset,
			     uint32_t list_size, uint32_t length_offset)
{
	struct heapscope_stats_block *b = &hs_stats_block;

	b->tcache_next_offset = next_offset;
	b->tcache_lists_offset = lists_offset;
	b->tcache_list_size = list_size;
	b->tcache_length_offset = length_offset;
	__atomic_store_n(&b->tcache_count, count, __ATOMIC_RELAXED);
	__atomic_store_n(&b->tcache_head, head, __ATOMIC_RELEASE);
}

void hs_stats_publish_spans(uint32_t start_offset, uint32_t npages_offset,
			    uint32_t next_offset)
{
	hs_heap_map.span_start_offset = start_offset;
	hs_heap_map.span_npages_offset = npages_offset;
	hs_heap_map.span_next_offset = next_offset;
}

void hs_stats_publish_runs(uint64_t base, uint64_t meta, uint32_t pages,
			   const uint32_t *frontier, uint32_t entry_size,
			   uint32_t tag_offset, uint32_t len_offset,
			   uint16_t tag_used, uint16_t tag_free)
{
	struct heapscope_heap_map *m = &hs_heap_map;

	m->run_meta = meta;
	m->region_pages = pages;
	m->run_frontier_addr = (uint64_t)(uintptr_t)frontier;
	m->run_entry_size = entry_size;
	m->run_tag_offset = tag_offset;
	m->run_len_offset = len_offset;
	m->run_tag_used = tag_used;
	m->run_tag_free = tag_free;
	__atomic_store_n(&m->region_base, base, __ATOMIC_RELEASE);
}

void hs_stats_publish_class(unsigned c, uint32_t size)
{
	if (c >= HEAPSCOPE_STATS_MAX_CLASSES)
		return;
	hs_stats_block.class_size[c] = size;
	if (c + 1 > hs_stats_block.class_count)
		hs_stats_block.class_count = c + 1;
}

void hs_stats_publish_unwind(uint64_t bytes)
{
	hs_stats_block.unwind_cache_bytes = bytes;
}

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
