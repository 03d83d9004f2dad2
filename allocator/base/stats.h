/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/stats.h - every statistic of the allocator, from one
 * X-macro list, and the figures derived from them (stats.c).  Every
 * reader derives from this list: the HEAPSCOPE_VERBOSE=2 dump, mallinfo /
 * mallinfo2, heapscope_get_allocator_stats and
 * heapscope_get_sampling_stats (api/stats_api.c).
 *
 * The counters live in the exported statistics block (`heapscope_stats`,
 * struct heapscope_stats_block in include/heapscope/abi.h), so readers
 * outside the process see them with no copy; the list's order is the
 * block's HEAPSCOPE_STAT_* numbering (pinned in stats.c).
 *
 * Values are bytes unless the name ends in _count or _total (events) or
 * is `live` (records).  Updated with relaxed atomics, mostly under the
 * lock of the structure they describe; read racily: each value is exact
 * at some moment, a set of them is not a snapshot.
 */
#ifndef HS_STATS_H
#define HS_STATS_H

#include <stdint.h>

#include "heapscope/abi.h"

/*
 * The heap (core and the sampled region's large blocks).  Large blocks
 * live in two pools, the page heap (whole spans) and the sampled region
 * (blocks up to HEAPSCOPE_REGION_BLOCK_MAX, and samples without a
 * proxy); each pool's figures are changed only by hs_stat_large(), which
 * the pool serving the block calls, and hs_stats_heap() adds them up.
 */
#define HS_STATS_HEAP(X)                                                       \
	X(system_bytes, "address space reserved from the OS for the heap")     \
	X(meta_bytes, "address space reserved for metadata")                   \
	X(pageheap_free_bytes, "free spans in the page heap, committed")       \
	X(pageheap_released_bytes, "free spans given back to the OS")          \
	X(pageheap_free_count, "free spans (committed or released)")           \
	X(small_span_bytes, "spans carved into small objects")                 \
	X(central_free_bytes, "free objects held by central free lists")       \
	X(pageheap_large_bytes, "large blocks in page-heap spans")             \
	X(pageheap_large_count, "those blocks")                                \
	X(region_large_bytes, "large blocks in the sampled region (unsampled " \
	  "blocks, and samples without a proxy)")                              \
	X(region_large_count, "those blocks")                                  \
	X(pageheap_merge_count, "runs of committed and released spans merged") \
	X(release_calls_count, "madvise(DONTNEED) calls")                      \
	X(released_total_bytes, "bytes given back to the OS, cumulative")      \
	X(foreign_free_count, "frees of pointers the heap does not own")       \
	X(span_waste_bytes, "tails of small spans that hold no object")        \
	X(sampled_large_bytes, "samples without a proxy (in region_large)")    \
	X(meta_used_bytes, "metadata handed out of meta_bytes (bump)")

/*
 * The sampling side, in the order and with the names of the public
 * struct heapscope_sampling_stats (include/heapscope/heapscope.h, whose
 * comments give each one's meaning); api/stats_api.c pins the layout.
 */
#define HS_STATS_SAMPLING(X)                                                   \
	X(samples_total, "sampled allocations taken")                          \
	X(frees_total, "sampled allocations freed")                            \
	X(dropped_total, "samples chosen but served unsampled")                \
	X(invalid_frees_total, "invalid or double frees in the region")        \
	X(live, "live sampled allocations (records)")                          \
	X(pages_bytes, "8 KiB pages held by live samples")                     \
	X(proxy_bytes, "allocated bytes of their proxies")                     \
	X(record_bytes, "registry records touched (high water)")               \
	X(inuse_estimate, "sum a * W / (r + 1) over live samples")             \
	X(fragmentation_estimate, "sum W * (a - r) / (r + 1)")                 \
	X(region_bytes, "size of the sampled region")                          \
	X(mismatched_frees_total, "sized frees that did not fit a sample")     \
	X(cached_bytes, "freed region pages kept committed for reuse")         \
	X(recycled_bytes_total, "region pages handed out again from the cache")

#define HS_STATS_LIST(X) HS_STATS_HEAP(X) HS_STATS_SAMPLING(X)

enum hs_stat_id {
#define HS_STAT_ENUM(name, desc) HS_STAT_##name,
	HS_STATS_LIST(HS_STAT_ENUM)
#undef HS_STAT_ENUM
		HS_STAT_COUNT
};

/* The first sampling statistic, and how many there are. */
#define HS_STAT_SAMPLING_FIRST HS_STAT_samples_total
#define HS_STAT_SAMPLING_COUNT (HS_STAT_COUNT - HS_STAT_SAMPLING_FIRST)

/* The exported block (stats.c): header, counters, class sizes, the
 * thread-cache list for outside readers.  Hidden name; the export is an
 * alias, so the library reaches it PC-relative as before. */
extern struct heapscope_stats_block hs_stats_block;
#define hs_stats (hs_stats_block.values)
_Static_assert(HS_STAT_COUNT <= HEAPSCOPE_STATS_MAX_VALUES,
	       "the statistics outgrew the exported block");

/*
 * Publish what outside readers need to sum the thread caches (abi.h):
 * head of the list of every cache, how many, where a cache keeps its
 * next link and its lists.  Called by the core once per new cache, under
 * the metadata lock; the head is stored last (release).
 */
void hs_stats_publish_tcache(uint64_t head, uint64_t count,
			     uint32_t next_offset, uint32_t lists_offset,
			     uint32_t list_size, uint32_t length_offset);
/*
 * The heap map (abi.h, struct heapscope_heap_map; stats block version 2):
 * where outside readers find the in-use large blocks to measure their
 * residency.  hs_heap_map.large_head / large_count ARE the list of the
 * page heap's in-use large spans (core/large.c keeps it, under the page
 * heap lock).  publish_spans: the span layout (core, at init);
 * publish_runs: the region's run entries (region, at init; base stored
 * last, release).
 */
extern struct heapscope_heap_map hs_heap_map;
void hs_stats_publish_spans(uint32_t start_offset, uint32_t npages_offset,
			    uint32_t next_offset);
void hs_stats_publish_runs(uint64_t base, uint64_t meta, uint32_t pages,
			   const uint32_t *frontier, uint32_t entry_size,
			   uint32_t tag_offset, uint32_t len_offset,
			   uint16_t tag_used, uint16_t tag_free);
/* Publish size class c's object size (core, at size-class init). */
void hs_stats_publish_class(unsigned c, uint32_t size);
/* Publish the unwinder's static cache size (sampling, at init). */
void hs_stats_publish_unwind(uint64_t bytes);

static inline void hs_stat_add(enum hs_stat_id id, int64_t delta)
{
	__atomic_fetch_add(&hs_stats[id], delta, __ATOMIC_RELAXED);
}

static inline void hs_stat_set(enum hs_stat_id id, int64_t value)
{
	__atomic_store_n(&hs_stats[id], value, __ATOMIC_RELAXED);
}

static inline int64_t hs_stat_get(enum hs_stat_id id)
{
	return __atomic_load_n(&hs_stats[id], __ATOMIC_RELAXED);
}

/* The pools a large block can come from. */
enum hs_pool {
	HS_POOL_PAGE_HEAP, /* a whole span (core/large.c) */
	HS_POOL_REGION,    /* pages of the sampled region (region/blocks.c,
			    * and samples without a proxy) */
};

/*
 * The one accounting call of large blocks, made by the pool that serves
 * the block: bytes and count enter (+), change in place (count 0) or
 * leave (-) the pool's figures.  Two atomic adds, as before there was
 * one call: the totals are summed by the one reader, hs_stats_heap.
 * Thread-safe.
 */
static inline void hs_stat_large(enum hs_pool pool, int64_t bytes,
				 int64_t count)
{
	int region = pool == HS_POOL_REGION;

	hs_stat_add(region ? HS_STAT_region_large_bytes
			   : HS_STAT_pageheap_large_bytes,
		    bytes);
	hs_stat_add(region ? HS_STAT_region_large_count
			   : HS_STAT_pageheap_large_count,
		    count);
}

/*
 * The heap's figures derived from the list, computed in one place for
 * every reader (bytes; negative transients read as 0).
 */
struct hs_heap_figures {
	uint64_t in_use;       /* small spans minus central free objects,
				* plus large blocks (objects cached by
				* threads count as used) */
	uint64_t large;        /* large blocks in use, both pools */
	uint64_t large_count;  /* their number */
	uint64_t arena;        /* obtained from the OS and not given back:
				* page heap reservations minus released
				* spans, plus the region's large blocks */
	uint64_t free;         /* committed free spans + central free */
	uint64_t free_spans;   /* free spans in the page heap (count) */
	uint64_t pageheap_free;     /* committed free spans */
	uint64_t pageheap_released; /* free spans given back to the OS */
	uint64_t central_free; /* free objects in central lists */
	uint64_t released_total; /* given back to the OS, cumulative */
	uint64_t system;       /* reserved for the heap */
	uint64_t meta;         /* reserved for metadata */
};

/* Fill *f from the statistics.  Thread-safe, racy, never allocates. */
void hs_stats_heap(struct hs_heap_figures *f);

/* Writes every statistic to stderr with hs_log.  Thread-safe, racy. */
void hs_stats_print(void);

#endif /* HS_STATS_H */
