// SPDX-License-Identifier: MIT
/*
 * test_rss_compute.c - cmocka tests of the RSS table's arithmetic
 * (collector/profiles/rss.c, hs_rss__compute) on hand-made snapshots:
 * each part from its counters (expected values written out here from the
 * formulas of docs/profiles.md), parts summing to RSS, committed but not
 * resident bytes taken off free memory, metadata and sampling cost in
 * that order and never off heap_in_use, measured sample residency
 * replacing the counter, measured large-block residency making the part
 * heap_in_use while the exact count stays beside it, the central lists
 * in heap_free_committed (not thread_caches).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "profiles.h"
#include "target.h"

#define MiB (1ull << 20)

static void snapshot(struct hs_stats_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->consistent = true;
	s->v[HEAPSCOPE_STAT_SMALL_SPAN_BYTES] = 10 * MiB;
	s->v[HEAPSCOPE_STAT_SPAN_WASTE_BYTES] = 1 * MiB;
	s->v[HEAPSCOPE_STAT_CENTRAL_FREE_BYTES] = 2 * MiB;
	s->tcache_bytes = 1 * MiB;
	s->v[HEAPSCOPE_STAT_PAGEHEAP_LARGE_BYTES] = 20 * MiB;
	s->v[HEAPSCOPE_STAT_REGION_LARGE_BYTES] = 5 * MiB;
	s->v[HEAPSCOPE_STAT_SAMPLED_LARGE_BYTES] = 4 * MiB;
	s->v[HEAPSCOPE_STAT_PAGES_BYTES] = 6 * MiB;
	s->v[HEAPSCOPE_STAT_PAGEHEAP_FREE_BYTES] = 3 * MiB;
	s->v[HEAPSCOPE_STAT_CACHED_BYTES] = 1 * MiB;
	s->v[HEAPSCOPE_STAT_META_BYTES] = 4 * MiB; /* 2 MiB never touched */
	s->v[HEAPSCOPE_STAT_META_USED_BYTES] = 2 * MiB;
	s->v[HEAPSCOPE_STAT_RECORD_BYTES] =
		10 * sizeof(struct heapscope_record);
	s->v[HEAPSCOPE_STAT_SAMPLES_TOTAL] = 12;
	s->v[HEAPSCOPE_STAT_INUSE_ESTIMATE] = 31 * MiB;
	s->unwind_cache_bytes = 131072;
}

static uint64_t sum(const struct hs_rss_table *t)
{
	uint64_t n = 0;

	for (int i = 0; i < HS_RSS_NPARTS; i++)
		n += t->parts[i];
	return n;
}

static void test_parts(void **state)
{
	struct hs_stats_snapshot s;
	struct hs_rss_table t;
	const uint64_t reg = 10 * (600 + 40 + 4), rss = 60 * MiB,
		       anon = 55 * MiB;

	(void)state;
	snapshot(&s);
	hs_rss__compute(&s, rss, anon, anon, -1, -1, &t);
	/* (10 - 1 - 2 - 1) small + 25 large */
	assert_int_equal(t.parts[HS_RSS_HEAP_IN_USE], 31 * MiB);
	assert_int_equal(t.heap_in_use_allocated, 31 * MiB);
	assert_false(t.large_measured);
	/* page heap 3, region cache 1, tails 1, central lists 2 */
	assert_int_equal(t.parts[HS_RSS_HEAP_FREE_COMMITTED], 7 * MiB);
	assert_int_equal(t.parts[HS_RSS_THREAD_CACHES], 1 * MiB);
	assert_int_equal(t.parts[HS_RSS_ALLOCATOR_METADATA], 2 * MiB);
	/* 6 - 4 pages, records, unwind cache */
	assert_int_equal(t.parts[HS_RSS_SAMPLING_COST], 2 * MiB + reg + 131072);
	assert_int_equal(t.parts[HS_RSS_FILE_BACKED], 5 * MiB);
	assert_int_equal(t.parts[HS_RSS_OTHER_ANONYMOUS],
			 anon - 43 * MiB - reg - 131072);
	assert_int_equal(sum(&t), rss);
	assert_int_equal(t.parts_sum, rss);
	assert_int_equal(t.unresident_bytes, 0);
	assert_int_equal(t.inuse_estimate, 31 * MiB);
	/* measured residency of the samples replaces the counter */
	hs_rss__compute(&s, rss, anon, anon, 4096, -1, &t);
	assert_int_equal(t.parts[HS_RSS_SAMPLING_COST], 4096 + reg + 131072);
	assert_true(t.sampled_measured);
}

static void test_unresident(void **state)
{
	struct hs_stats_snapshot s;
	struct hs_rss_table t;
	const uint64_t reg = 10 * (600 + 40 + 4);

	(void)state;
	snapshot(&s);
	/* 40 MiB anonymous, of which 1 MiB is certainly not the
	 * allocator's: its 43 MiB + reg + unwind are 4 MiB + reg + unwind
	 * too many; 5 MiB of free memory absorb them */
	hs_rss__compute(&s, 45 * MiB, 40 * MiB, 39 * MiB, -1, -1, &t);
	assert_int_equal(t.unresident_bytes, 4 * MiB + reg + 131072);
	assert_int_equal(t.parts[HS_RSS_HEAP_FREE_COMMITTED],
			 3 * MiB - reg - 131072);
	assert_int_equal(t.parts[HS_RSS_ALLOCATOR_METADATA], 2 * MiB);
	assert_int_equal(t.parts[HS_RSS_OTHER_ANONYMOUS], 1 * MiB);
	assert_int_equal(t.anon_outside_bytes, 1 * MiB);
	assert_int_equal(sum(&t), 45 * MiB);
	/* 32 MiB: free, metadata, sampling cost, caches go; heap_in_use
	 * stays exact and the sum exceeds RSS by what remains */
	hs_rss__compute(&s, 32 * MiB, 30 * MiB, 30 * MiB, -1, -1, &t);
	assert_int_equal(t.parts[HS_RSS_HEAP_IN_USE], 31 * MiB);
	assert_int_equal(t.parts[HS_RSS_HEAP_FREE_COMMITTED], 0);
	assert_int_equal(t.parts[HS_RSS_ALLOCATOR_METADATA], 0);
	assert_int_equal(t.parts[HS_RSS_SAMPLING_COST], 0);
	assert_int_equal(t.parts[HS_RSS_THREAD_CACHES], 0);
	assert_int_equal(t.parts[HS_RSS_OTHER_ANONYMOUS], 0);
	assert_int_equal(sum(&t), 33 * MiB);
	/* anonymous beyond RSS (two reads apart) is cut to RSS */
	hs_rss__compute(&s, 50 * MiB, 60 * MiB, 60 * MiB, -1, -1, &t);
	assert_int_equal(t.parts[HS_RSS_FILE_BACKED], 0);
	assert_int_equal(sum(&t), 50 * MiB);
}

/* 25 MiB of large blocks of which 5 MiB are resident (measured): the
 * part counts 6 MiB of small objects and the 5 MiB, the exact count keeps
 * 31 MiB, and with 20 MiB less in the parts they fit RSS again. */
static void test_large_resident(void **state)
{
	struct hs_stats_snapshot s;
	struct hs_rss_table t;
	const uint64_t reg = 10 * (600 + 40 + 4);

	(void)state;
	snapshot(&s);
	hs_rss__compute(&s, 32 * MiB, 30 * MiB, 30 * MiB, -1, 5 * MiB, &t);
	assert_true(t.large_measured);
	assert_int_equal(t.parts[HS_RSS_HEAP_IN_USE], 11 * MiB);
	assert_int_equal(t.heap_in_use_allocated, 31 * MiB);
	assert_int_equal(t.large_resident_bytes, 5 * MiB);
	/* 11 + 7 + 1 + 2 + 2 MiB + reg + unwind = 23 MiB + ...: all fit
	 * in 30 MiB anonymous */
	assert_int_equal(t.unresident_bytes, 0);
	assert_int_equal(t.parts[HS_RSS_OTHER_ANONYMOUS],
			 7 * MiB - reg - 131072);
	assert_int_equal(sum(&t), 32 * MiB);
	/* a measurement above the count (racy reads) is cut to it */
	hs_rss__compute(&s, 60 * MiB, 55 * MiB, 55 * MiB, -1, 40 * MiB, &t);
	assert_int_equal(t.large_resident_bytes, 25 * MiB);
	assert_int_equal(t.parts[HS_RSS_HEAP_IN_USE], 31 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_unresident),
		cmocka_unit_test(test_large_resident),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
