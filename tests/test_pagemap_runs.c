/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pagemap_runs.c - the pagemap's run writes (h22-pageheap:
 * core/pagemap.c set_run) and the small spans the page heap hands out
 * with their class already in every entry.
 *
 * - hs_pagemap_set_range(span, cls) on a span whose 8 pages straddle two
 *   leaves (2^15 pages each) makes every page's entry the span's address
 *   with cls in bits 52 and up, and leaves the pages around it 0;
 *   hs_pagemap_clear_range clears the interior and nothing else; n = 0
 *   writes nothing.
 * - hs_page_heap_alloc_small_n(8, cls, 3, ...) gives spans of shard 3
 *   every page of which reads back that span, cls and the shard; once the class is cleared and
 *   they are back in the page heap, no entry of their pages carries a
 *   class and both checkers (page heap, pagemap) accept the result.
 * Expected entries are built here from the span's address and the class
 * (the entry layout documented in core/pagemap.h), not read back from
 * pagemap.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/init.h"
#include "core/page_heap.h"
#include "core/pagemap.h"

static int setup(void **state)
{
	(void)state;
	hs_init_global();
	return 0;
}

static uintptr_t entry_of(const hs_span_t *s, unsigned cls)
{
	return (uintptr_t)s | (uintptr_t)cls << 52;
}

static void test_run_across_leaves(void **state)
{
	(void)state;
	static hs_span_t a;
	const uintptr_t leaf = (uintptr_t)1 << 15;
	/* far from the heap: 0x310000000000, 3 pages before a leaf ends */
	uintptr_t start =
		((((uintptr_t)0x310000000000 >> HS_PAGE_SHIFT) | (leaf - 1)) +
		 1) -
		3;
	assert_int_equal((start + 3) % leaf, 0);
	a.start = start;
	a.npages = 8;
	a.location = HS_SPAN_IN_USE;
	assert_true(hs_pagemap_ensure(start - 1, 10));
	hs_pagemap_set_range(&a, 9);
	for (uintptr_t p = start - 1; p <= start + 8; p++)
		assert_int_equal(hs_pagemap_entry(p),
				 p >= start && p < start + 8 ? entry_of(&a, 9)
							     : 0);
	hs_pagemap_clear_range(start + 1, 0);
	assert_int_equal(hs_pagemap_entry(start + 1), entry_of(&a, 9));
	hs_pagemap_clear_range(start + 1, 6);
	for (uintptr_t p = start - 1; p <= start + 8; p++)
		assert_int_equal(hs_pagemap_entry(p),
				 p == start || p == start + 7 ? entry_of(&a, 9)
							      : 0);
	hs_pagemap_set(start, NULL);
	hs_pagemap_set(start + 7, NULL);
}

static void test_small_spans_carry_class(void **state)
{
	(void)state;
	/* shard 3: the entries' low 4 bits while the span has a class
	 * (core/pagemap.h, HS_PM_SHARD_MASK) */
	enum { N = 3, PAGES = 8, CLS = 5, SHARD = 3 };
	hs_span_t *s[N];
	assert_int_equal(hs_page_heap_alloc_small_n(PAGES, CLS, SHARD, s, N),
			 N);
	uintptr_t start[N];
	for (int i = 0; i < N; i++) {
		assert_int_equal(s[i]->npages, PAGES);
		assert_int_equal(s[i]->shard, SHARD);
		start[i] = s[i]->start;
		for (uintptr_t p = 0; p < PAGES; p++)
			assert_int_equal(hs_pagemap_entry(start[i] + p),
					 entry_of(s[i], CLS) | SHARD);
	}
	for (int i = 0; i < N; i++) {
		hs_pagemap_set_class(s[i], 0);
		for (uintptr_t p = 0; p < PAGES; p++)
			assert_int_equal(hs_pagemap_entry(start[i] + p),
					 entry_of(s[i], 0));
		hs_page_heap_free_small(s[i]);
	}
	for (int i = 0; i < N; i++)
		for (uintptr_t p = 0; p < PAGES; p++)
			assert_int_equal(hs_pagemap_entry(start[i] + p) >> 52,
					 0);
	hs_page_heap_lock();
	assert_int_equal(hs_pagemap_is_valid(), 1);
	hs_page_heap_unlock();
	assert_int_equal(hs_page_heap_is_valid(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_across_leaves),
		cmocka_unit_test(test_small_spans_carry_class),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
