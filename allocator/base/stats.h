/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/stats.h - allocator statistics from one X-macro list.  All
 * values are bytes unless the name ends in _count.  Updated with relaxed
 * atomics (mostly under the lock of the structure they describe); read
 * racily by mallinfo2 and the stats dump.
 */
#ifndef HS_STATS_H
#define HS_STATS_H

#include <stdint.h>

#define HS_STATS_LIST(X)                                                       \
	X(system_bytes, "address space reserved from the OS for the heap")     \
	X(meta_bytes, "address space reserved for metadata")                   \
	X(pageheap_free_bytes, "free spans in the page heap, committed")       \
	X(pageheap_released_bytes, "free spans given back to the OS")          \
	X(pageheap_free_count, "free spans (committed or released)")           \
	X(small_span_bytes, "spans carved into small objects")                 \
	X(central_free_bytes, "free objects held by central free lists")       \
	X(large_bytes, "large allocations (whole spans)")                      \
	X(large_count, "large allocations in use")                             \
	X(region_large_bytes, "blocks in the sampled region counted as large " \
	  "allocations (unsampled, and samples without a proxy)")              \
	X(region_large_count, "those blocks in use")                           \
	X(pageheap_merge_count, "runs of committed and released spans merged") \
	X(release_calls_count, "madvise(DONTNEED) calls")                      \
	X(released_total_bytes, "bytes given back to the OS, cumulative")      \
	X(foreign_free_count, "frees of pointers the heap does not own")

enum hs_stat_id {
#define HS_STAT_ENUM(name, desc) HS_STAT_##name,
	HS_STATS_LIST(HS_STAT_ENUM)
#undef HS_STAT_ENUM
		HS_STAT_COUNT
};

extern int64_t hs_stats[HS_STAT_COUNT];

static inline void hs_stat_add(enum hs_stat_id id, int64_t delta)
{
	__atomic_fetch_add(&hs_stats[id], delta, __ATOMIC_RELAXED);
}

static inline int64_t hs_stat_get(enum hs_stat_id id)
{
	return __atomic_load_n(&hs_stats[id], __ATOMIC_RELAXED);
}

/* Fills a glibc struct mallinfo2 from the statistics (see stats.c for
 * the meaning of each field).  Thread-safe, racy. */
struct mallinfo2;
void hs_stats_mallinfo2(struct mallinfo2 *mi);

/* Writes every statistic to stderr with hs_log.  Thread-safe, racy. */
void hs_stats_print(void);

#endif /* HS_STATS_H */
