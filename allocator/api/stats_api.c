/* SPDX-License-Identifier: MIT */
/*
 * allocator/api/stats_api.c - every reader of the statistics: glibc's
 * mallinfo / mallinfo2, heapscope_get_allocator_stats and
 * heapscope_get_sampling_stats (include/heapscope/heapscope.h).  Each
 * derives from the one list in base/stats.h: the counters as they are,
 * the heap's derived figures from hs_stats_heap().  Lock-free, never
 * allocate.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_common.h"
#include "base/stats.h"
#include "core/size_class.h"
#include "core/thread_cache.h"
#include "heapscope/heapscope.h"

/* struct heapscope_sampling_stats is the sampling part of the list, in
 * order: each field pinned to its statistic. */
#define HS_PIN_SAMPLING(name, desc)                                          \
	_Static_assert(offsetof(struct heapscope_sampling_stats, name) ==     \
			       (HS_STAT_##name - HS_STAT_SAMPLING_FIRST) *    \
				       sizeof(uint64_t),                      \
		       "heapscope_sampling_stats." #name                      \
		       " is not where HS_STATS_SAMPLING puts it");
HS_STATS_SAMPLING(HS_PIN_SAMPLING)
#undef HS_PIN_SAMPLING
_Static_assert(sizeof(struct heapscope_sampling_stats) ==
		       HS_STAT_SAMPLING_COUNT * sizeof(uint64_t),
	       "heapscope_sampling_stats and HS_STATS_SAMPLING differ");

HS_EXPORT int heapscope_get_sampling_stats(struct heapscope_sampling_stats *out,
					   size_t size)
{
	uint64_t st[HS_STAT_SAMPLING_COUNT];

	if (!out)
		return -EINVAL;
	for (int i = 0; i < HS_STAT_SAMPLING_COUNT; i++)
		st[i] = (uint64_t)hs_stat_get(
			(enum hs_stat_id)(HS_STAT_SAMPLING_FIRST + i));
	memcpy(out, st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

/*
 * struct heapscope_allocator_stats, field by field: X(field, value), in
 * the struct's order (pinned below).  f: the heap's figures; ss: the
 * sampling statistics; tc: bytes in the calling thread's cache.
 */
#define HS_ALLOCATOR_STATS(X)                                                \
	X(in_use_bytes, f.in_use)                                             \
	X(thread_cache_bytes, tc)                                             \
	X(central_free_bytes, f.central_free)                                 \
	X(pageheap_free_bytes, f.pageheap_free)                               \
	X(pageheap_released_bytes, f.pageheap_released)                       \
	X(released_total_bytes, f.released_total)                             \
	X(system_bytes, f.system)                                             \
	X(metadata_bytes, f.meta)                                             \
	X(large_bytes, f.large)                                               \
	X(sampled_pages_bytes, ss.pages_bytes)                                \
	X(sampled_proxy_bytes, ss.proxy_bytes)                                \
	X(sampled_record_bytes, ss.record_bytes)                              \
	X(sampled_inuse_estimate, ss.inuse_estimate)                          \
	X(sampled_fragmentation_estimate, ss.fragmentation_estimate)

enum {
#define HS_ALLOC_STAT_ENUM(field, value) HS_ALLOC_STAT_##field,
	HS_ALLOCATOR_STATS(HS_ALLOC_STAT_ENUM)
#undef HS_ALLOC_STAT_ENUM
		HS_ALLOC_STAT_COUNT
};
#define HS_PIN_ALLOCATOR(field, value)                                       \
	_Static_assert(offsetof(struct heapscope_allocator_stats, field) ==   \
			       HS_ALLOC_STAT_##field * sizeof(uint64_t),      \
		       "heapscope_allocator_stats." #field " out of order");
HS_ALLOCATOR_STATS(HS_PIN_ALLOCATOR)
#undef HS_PIN_ALLOCATOR
_Static_assert(sizeof(struct heapscope_allocator_stats) ==
		       HS_ALLOC_STAT_COUNT * sizeof(uint64_t),
	       "heapscope_allocator_stats and HS_ALLOCATOR_STATS differ");

HS_EXPORT int heapscope_get_allocator_stats(struct heapscope_allocator_stats *out,
					    size_t size)
{
	struct heapscope_allocator_stats st;
	struct heapscope_sampling_stats ss;
	struct hs_heap_figures f;
	uint64_t tc = 0;

	if (!out)
		return -EINVAL;
	hs_stats_heap(&f);
	heapscope_get_sampling_stats(&ss, sizeof(ss));
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		tc += (uint64_t)hs_thread.tc->lists[c].length * hs_classes[c].size;
#define HS_ALLOC_STAT_FILL(field, value) st.field = (value);
	HS_ALLOCATOR_STATS(HS_ALLOC_STAT_FILL)
#undef HS_ALLOC_STAT_FILL
	memcpy(out, &st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

/*
 * mallinfo2 as heapscope sees it (bytes; hs_heap_figures says what each
 * figure covers):
 *   arena    heap memory obtained from the OS and not given back
 *   ordblks  free spans in the page heap
 *   hblks    large blocks in use (both pools); hblkhd their bytes
 *   uordblks bytes in use
 *   fordblks free bytes: committed free spans + central free objects
 *   keepcost bytes released to the OS and still reserved
 *   smblks, usmblks, fsmblks: 0
 */
HS_EXPORT struct mallinfo2 mallinfo2(void)
{
	struct mallinfo2 mi = { 0 };
	struct hs_heap_figures f;

	hs_stats_heap(&f);
	mi.arena = f.arena;
	mi.ordblks = f.free_spans;
	mi.hblks = f.large_count;
	mi.hblkhd = f.large;
	mi.uordblks = f.in_use;
	mi.fordblks = f.free;
	mi.keepcost = f.pageheap_released;
	return mi;
}

static int clamp_int(size_t v)
{
	return v > INT32_MAX ? INT32_MAX : (int)v;
}

HS_EXPORT struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = mallinfo2();
	struct mallinfo m;

	m.arena = clamp_int(m2.arena);
	m.ordblks = clamp_int(m2.ordblks);
	m.smblks = clamp_int(m2.smblks);
	m.hblks = clamp_int(m2.hblks);
	m.hblkhd = clamp_int(m2.hblkhd);
	m.usmblks = clamp_int(m2.usmblks);
	m.fsmblks = clamp_int(m2.fsmblks);
	m.uordblks = clamp_int(m2.uordblks);
	m.fordblks = clamp_int(m2.fordblks);
	m.keepcost = clamp_int(m2.keepcost);
	return m;
}
