// SPDX-License-Identifier: MIT
/*
 * The page heap's swap on fault-in (allocator/core/page_release.c,
 * hs_ph_release_on_fault_locked), on the static library with
 * HEAPSCOPE_RELEASE_RATE=128M (the default floor), sampling off and
 * HEAPSCOPE_REGION_BLOCK_MAX=0 (set by ctest):
 * - free committed spans under the floor stay committed while requests
 *   fit in them (nothing is released);
 * - a span cut from released memory (no committed span fits) first
 *   releases as much committed free memory, oldest first, the last span
 *   cut to size: exactly its size, counted byte for byte in the
 *   statistics;
 * - a span cut from committed memory releases nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "base/stats.h"
#include "core/page_heap.h"
#include "core/pagemap.h"

#define MIB ((size_t)1 << 20)
#define PAGES(bytes) ((bytes) >> HS_PAGE_SHIFT)

static int64_t committed_free(void)
{
	return hs_stat_get(HS_STAT_pageheap_free_bytes);
}

static int64_t released_total(void)
{
	return hs_stat_get(HS_STAT_released_total_bytes);
}

/* A span of `bytes`, every page written (resident). */
static hs_span_t *span_touched(size_t bytes)
{
	hs_span_t *s = hs_page_heap_alloc(PAGES(bytes), 1);
	assert_non_null(s);
	memset(hs_span_addr(s), 0x5a, hs_span_bytes(s));
	return s;
}

static void test_swap_on_fault(void **state)
{
	(void)state;
	hs_page_heap_release(SIZE_MAX);
	assert_int_equal(committed_free(), 0);

	/* a | g1 | b | g2, freed a then b: two committed spans, kept apart
	 * by the guards (they would coalesce) */
	hs_span_t *a = span_touched(2 * MIB);
	hs_span_t *g1 = span_touched(1 * MIB);
	hs_span_t *b = span_touched(3 * MIB);
	hs_span_t *g2 = span_touched(1 * MIB);
	uintptr_t a_start = a->start;
	/* the premise: a and b are not neighbours (they would coalesce) */
	assert_true(a->start + a->npages != b->start &&
		    b->start + b->npages != a->start);
	/* memory left in the heap's chunk is released: the guards' pages
	 * came from it, and nothing was committed free to swap */
	int64_t released = released_total();
	hs_page_heap_free(a);
	hs_page_heap_free(b);
	assert_int_equal(committed_free(), (int64_t)(5 * MIB));
	/* under the 128 MiB floor and twice the in-use bytes: kept */
	assert_int_equal(released_total(), released);

	/* fits in a: cut from committed memory, nothing released */
	hs_span_t *c = hs_page_heap_alloc(PAGES(1 * MIB), 1);
	assert_non_null(c);
	assert_int_equal(c->start, a_start);
	assert_int_equal(committed_free(), (int64_t)(4 * MIB));
	assert_int_equal(released_total(), released);
	hs_page_heap_free(c); /* coalesces with a's rest: 2 MiB again */
	assert_int_equal(committed_free(), (int64_t)(5 * MIB));

	/* 4 MiB fits in no committed span: cut from released memory, it
	 * releases the oldest committed span, a (2 MiB, freed first), then
	 * the 2 MiB still missing from b's end; b's first 1 MiB stays */
	uintptr_t b_start = b->start;
	hs_span_t *d = hs_page_heap_alloc(PAGES(4 * MIB), 1);
	assert_non_null(d);
	assert_int_equal(committed_free(), (int64_t)(1 * MIB));
	assert_int_equal(released_total(), released + (int64_t)(4 * MIB));
	hs_span_t *bs = hs_pagemap_get(b_start);
	assert_non_null(bs);
	assert_int_equal(bs->location, HS_SPAN_FREE);
	assert_int_equal(bs->npages, PAGES(1 * MIB));
	hs_span_t *bt = hs_pagemap_get(b_start + PAGES(1 * MIB));
	assert_non_null(bt);
	assert_int_equal(bt->location, HS_SPAN_RELEASED);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	hs_page_heap_free(d);
	assert_int_equal(hs_page_heap_is_valid(), 1);

	/* oldest first, only as much as is faulted in: e (freed first)
	 * and f, 1 MiB each, then 1 MiB aligned to 1 MiB, which needs a
	 * run of 255 pages (neither fits), is cut from released memory and
	 * faults in 1 MiB: e goes, f stays */
	hs_page_heap_release(SIZE_MAX);
	hs_span_t *e = span_touched(1 * MIB);
	hs_span_t *g3 = span_touched(1 * MIB);
	hs_span_t *f = span_touched(1 * MIB);
	hs_span_t *g4 = span_touched(1 * MIB);
	uintptr_t f_start = f->start;
	hs_page_heap_free(e);
	/* the coarse clock ticks every few ms: f is freed later */
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	hs_page_heap_free(f);
	released = released_total();
	assert_int_equal(committed_free(), (int64_t)(2 * MIB));
	hs_span_t *h = hs_page_heap_alloc(PAGES(1 * MIB), PAGES(1 * MIB));
	assert_non_null(h);
	assert_int_equal(committed_free(), (int64_t)(1 * MIB));
	assert_int_equal(released_total(), released + (int64_t)(1 * MIB));
	hs_span_t *fs = hs_pagemap_get(f_start);
	assert_non_null(fs);
	assert_int_equal(fs->location, HS_SPAN_FREE);
	hs_page_heap_free(h);
	assert_int_equal(hs_page_heap_is_valid(), 1);

	hs_page_heap_free(g1);
	hs_page_heap_free(g2);
	hs_page_heap_free(g3);
	hs_page_heap_free(g4);
	hs_page_heap_release(SIZE_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap_on_fault),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
