/* SPDX-License-Identifier: MIT */
/*
 * tests/test_churn.c - the small-object churn paths (issue 19): the
 * two-level pagemap and the thread cache's trips to the central lists.
 *
 * - The pagemap (core/pagemap.h): a span whose pages straddle two leaves
 *   (2^15 pages each) maps every page to itself, with its class, and its
 *   neighbours stay NULL; the last page of the 47-bit space (2^34 - 1)
 *   maps, the one after reads 0 and cannot be ensured.
 * - An overflow of the thread cache in a free streak (no refill since the
 *   previous overflow) while the transfer cache of the objects' shard is
 *   full gives the whole list to the spans: the list is empty after it.
 *   Any other overflow gives one batch back (length + 1 - batch left).
 *   Both kinds happen when a thread frees 24,000 objects it allocated (a
 *   tree freed at exit), the lists stay valid, and once the caches are
 *   flushed the spans the test made are back in the page heap.
 * Linked with libheapscope.a, sampling off (a sampled object would take
 * the sampled free path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/pagemap.h"
#include "core/size_class.h"
#include "core/thread_cache.h"

static void test_pagemap_leaf_boundary(void **state)
{
	(void)state;
	static hs_span_t a, b;
	const uintptr_t leaf = (uintptr_t)1 << HS_PM_LEAF_BITS;
	/* far from the heap: 0x300000000000, then 2 pages before a leaf */
	uintptr_t start = (((uintptr_t)0x300000000000 >> HS_PAGE_SHIFT) |
			   (leaf - 1)) -
			  1;
	assert_int_equal((start + 2) % leaf, 0);
	a.start = start;
	a.npages = 4;
	a.location = HS_SPAN_IN_USE;
	assert_true(hs_pagemap_ensure(start, 4));
	hs_pagemap_set_range(&a, 0);
	for (uintptr_t p = start - 1; p <= start + 4; p++) {
		hs_span_t *want = p >= start && p < start + 4 ? &a : NULL;
		assert_ptr_equal(hs_pagemap_get(p), want);
		assert_int_equal(hs_pm_entry_class(hs_pagemap_entry(p)), 0);
	}
	hs_pagemap_set_class(&a, 7);
	for (uintptr_t p = start; p < start + 4; p++) {
		uintptr_t e = hs_pagemap_entry(p);
		assert_ptr_equal(hs_pm_entry_span(e), &a);
		assert_int_equal(hs_pm_entry_class(e), 7);
	}
	assert_int_equal(hs_pagemap_entry(start + 4), 0);
	hs_pagemap_set_class(&a, 0);
	for (uintptr_t p = start; p < start + 4; p++)
		hs_pagemap_set(p, NULL);
	for (uintptr_t p = start - 1; p <= start + 4; p++)
		assert_int_equal(hs_pagemap_entry(p), 0);

	/* the top of the user address space */
	uintptr_t top = ((uintptr_t)1 << HS_PM_BITS) - 1;
	assert_true(hs_pagemap_ensure(top, 1));
	assert_false(hs_pagemap_ensure(top, 2));
	b.start = top;
	b.npages = 1;
	b.location = HS_SPAN_IN_USE;
	hs_pagemap_set(top, &b);
	assert_ptr_equal(hs_pagemap_get(top), &b);
	assert_int_equal(hs_pagemap_entry(top + 1), 0);
	assert_null(hs_pagemap_lookup((void *)((top << HS_PAGE_SHIFT) - 1)));
	assert_null(hs_pagemap_lookup((void *)((top + 1) << HS_PAGE_SHIFT)));
	hs_pagemap_set(top, NULL);
	assert_null(hs_pagemap_get(top));
	assert_int_equal(hs_pagemap_is_valid(), 1);
}

#define SIZE 208
#define N 24000 /* ~5 MiB: more than a transfer cache holds (256 KiB) */

static hs_tcache_t *cache(void)
{
	return *(hs_tcache_t *volatile *)&hs_thread.tc;
}

static void test_free_streak(void **state)
{
	(void)state;
	unsigned cls = hs_size_to_class(SIZE);
	const hs_class_info_t *ci = &hs_classes[cls];
	void **objs = mmap(NULL, N * sizeof(void *), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(objs != MAP_FAILED);
	free(malloc(16)); /* this thread's cache is active */
	assert_true(ci->batch > 1);
	int64_t spans0 = hs_stat_get(HS_STAT_small_span_bytes);
	for (int i = 0; i < N; i++) {
		objs[i] = malloc(SIZE);
		assert_non_null(objs[i]);
		memset(objs[i], 0x5a, SIZE);
	}
	assert_true(hs_stat_get(HS_STAT_small_span_bytes) > spans0);

	int whole = 0, batches = 0;
	for (int i = 0; i < N; i++) {
		hs_tc_list_t *l = &cache()->lists[cls];
		uint32_t len = l->length, max = l->max_length;
		bool streak = !(cache()->refilled[cls] & HS_TC_REFILLED);
		bool full = hs_central_tc_full(cls, objs[i]);
		free(objs[i]);
		if (len < max) {
			assert_int_equal(l->length, len + 1);
			continue;
		}
		/* an overflow */
		if (streak && full) {
			assert_int_equal(l->length, 0);
			whole++;
		} else {
			uint32_t n = len + 1 < ci->batch ? len + 1 : ci->batch;
			assert_int_equal(l->length, len + 1 - n);
			batches++;
		}
	}
	/* the first overflows fill the transfer cache, the later ones go
	 * to the spans whole */
	assert_true(batches > 0);
	assert_true(whole > 0);
	assert_true(hs_central_is_valid());
	malloc_trim(0); /* the thread cache and the transfer caches */
	assert_true(hs_central_is_valid());
	assert_true(hs_stat_get(HS_STAT_small_span_bytes) <= spans0);
	munmap(objs, N * sizeof(void *));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pagemap_leaf_boundary),
		cmocka_unit_test(test_free_streak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
