/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pagemap.c - the page -> span radix tree, and the page heap
 * on top of it (splitting, coalescing, alignment, release).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/central_freelist.h"
#include "core/init.h"
#include "core/page_heap.h"
#include "core/pagemap.h"
#include "base/stats.h"

static void test_get_set(void **state)
{
	(void)state;
	static hs_span_t a, b;
	/* far from anything the heap uses: 0x100000000000 */
	uintptr_t page = (uintptr_t)0x100000000000 >> HS_PAGE_SHIFT;
	assert_null(hs_pagemap_get(page));
	assert_true(hs_pagemap_ensure(page, 5000));
	hs_pagemap_set(page, &a);
	hs_pagemap_set(page + 4999, &b);
	assert_ptr_equal(hs_pagemap_get(page), &a);
	assert_ptr_equal(hs_pagemap_get(page + 4999), &b);
	assert_null(hs_pagemap_get(page + 1));
	hs_pagemap_set(page, NULL);
	hs_pagemap_set(page + 4999, NULL);
	assert_null(hs_pagemap_get(page));
}

static void test_garbage(void **state)
{
	(void)state;
	assert_null(hs_pagemap_lookup(NULL));
	assert_null(hs_pagemap_lookup((void *)-1));
	assert_null(hs_pagemap_lookup((void *)0xffff800000000000));
	assert_null(hs_pagemap_lookup((void *)0x800000000000));
	assert_null(hs_pagemap_lookup(&state));
	assert_false(hs_pagemap_ensure((uintptr_t)1 << 40, 4));
}

static void test_page_heap(void **state)
{
	(void)state;
	/* small spans map every page, large ones their edges only; on
	 * free the entries inside the merged free span are cleared */
	hs_span_t *s[3];
	for (int i = 0; i < 3; i++) {
		s[i] = i == 1 ? hs_page_heap_alloc(3, 1)
			      : hs_page_heap_alloc_small(3);
		assert_non_null(s[i]);
		assert_int_equal(s[i]->npages, 3);
		assert_int_equal(s[i]->location, HS_SPAN_IN_USE);
		for (size_t p = 0; p < 3; p++)
			if (i == 1 && p == 1)
				assert_null(hs_pagemap_get(s[i]->start + p));
			else
				assert_ptr_equal(
					hs_pagemap_get(s[i]->start + p), s[i]);
		memset(hs_span_addr(s[i]), 0xab, hs_span_bytes(s[i]));
	}
	assert_int_equal(hs_page_heap_is_valid(), 1);
	uintptr_t lo = s[0]->start, hi = s[2]->start + s[2]->npages;
	assert_int_equal(s[1]->start, lo + 3);
	assert_int_equal(s[2]->start, lo + 6);
	hs_page_heap_free_small(s[0]);
	hs_page_heap_free(s[1]);
	hs_page_heap_free_small(s[2]);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	/* one free span over the three (and whatever followed s[2]) */
	hs_span_t *f = hs_pagemap_get(lo);
	assert_non_null(f);
	assert_int_equal(f->start, lo);
	assert_true(f->start + f->npages >= hi);
	for (uintptr_t p = lo + 1; p < hi; p++)
		if (p != f->start + f->npages - 1)
			assert_null(hs_pagemap_get(p));
	assert_int_equal(hs_pagemap_is_valid(), 1);

	/* alignment: 1 MiB and 64 MiB */
	hs_span_t *a = hs_page_heap_alloc(1, 128);
	assert_non_null(a);
	assert_int_equal((uintptr_t)hs_span_addr(a) & ((1 << 20) - 1), 0);
	hs_span_t *b = hs_page_heap_alloc(10, 8192);
	assert_non_null(b);
	assert_int_equal((uintptr_t)hs_span_addr(b) & ((1 << 26) - 1), 0);
	assert_int_equal(b->npages, 10);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	hs_page_heap_free(a);
	hs_page_heap_free(b);
	assert_int_equal(hs_page_heap_is_valid(), 1);

	/* release everything: no committed free memory left */
	hs_page_heap_release(SIZE_MAX);
	assert_int_equal(hs_stat_get(HS_STAT_pageheap_free_bytes), 0);
	assert_int_equal(hs_page_heap_is_valid(), 1);

	/* impossible sizes */
	assert_null(hs_page_heap_alloc((size_t)1 << 40, 1));
	assert_null(hs_page_heap_alloc(0, 1));
}

/* malloc of the static library under threads, then the page heap must
 * still be consistent and every span either in use or coalesced */
static void *churn(void *arg)
{
	uintptr_t seed = (uintptr_t)arg + 1;
	void *keep[512] = {0};
	for (int i = 0; i < 100000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		size_t r = seed >> 33;
		size_t n = r % 10 ? r % 2048 : r % (1 << 20);
		unsigned k = (unsigned)(r >> 12) % 512;
		if (keep[k] && r % 7 == 0) {
			/* large blocks grow in place when they can */
			void *q = realloc(keep[k], 2 * n + 300000);
			assert_non_null(q);
			keep[k] = q;
			continue;
		}
		free(keep[k]);
		keep[k] = malloc(n);
		assert_non_null(keep[k]);
		memset(keep[k], 0x77, n < 64 ? n : 64);
	}
	for (int k = 0; k < 512; k++)
		free(keep[k]);
	return NULL;
}

static void test_churn_valid(void **state)
{
	(void)state;
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	assert_int_equal(hs_central_is_valid(), 1);
	assert_int_equal(hs_pagemap_is_valid(), 1);
	malloc_trim(0);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	assert_int_equal(hs_pagemap_is_valid(), 1);
	assert_int_equal(hs_stat_get(HS_STAT_pageheap_free_bytes), 0);
}

int main(void)
{
	hs_init_global();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_set),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_page_heap),
		cmocka_unit_test(test_churn_valid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
