// SPDX-License-Identifier: MIT
/*
 * Page heap policies (allocator/page_heap.c), on the static library with
 * HEAPSCOPE_RELEASE_RATE=16M, sampling off and HEAPSCOPE_REGION_BLOCK_MAX=0
 * (large blocks in the page heap) (set by ctest):
 * - a request that no single free span fits, but a run of a committed and
 *   a released neighbour does, is served from that run: the heap does not
 *   grow and nothing is released, and the span is not claimed zeroed;
 * - the release policy keeps free committed memory up to twice the bytes
 *   in use, drops to the floor when nothing is in use, and gives back
 *   memory above the floor that stayed free for more than a second.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/page_heap.h"
#include "core/pagemap.h"
#include "base/stats.h"

#define MIB ((int64_t)1 << 20)
#define FLOOR (16 * MIB) /* HEAPSCOPE_RELEASE_RATE, set by ctest */

static int64_t committed_free(void)
{
	return hs_stat_get(HS_STAT_pageheap_free_bytes);
}

static void test_merge_mixed_run(void **state)
{
	(void)state;
	/* 64 MiB in use lets the page heap keep 128 MiB free committed */
	void *ballast = malloc(64 * MIB);
	assert_non_null(ballast);
	/* a fresh chunk of its own (more than the 64 MiB standard chunk),
	 * freed: one committed span of 12000 pages */
	hs_span_t *big = hs_page_heap_alloc(12000, 1);
	assert_non_null(big);
	uintptr_t base = big->start;
	hs_page_heap_free(big);
	/* cut it into guard | A | B | guard, front to back (committed
	 * memory is served first and this is the only committed span) */
	hs_span_t *g1 = hs_page_heap_alloc(1, 1);
	hs_span_t *a = hs_page_heap_alloc(5900, 1);
	hs_span_t *b = hs_page_heap_alloc(5900, 1);
	hs_span_t *g2 = hs_page_heap_alloc(199, 1);
	assert_non_null(g1);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(g2);
	assert_int_equal(g1->start, base);
	assert_int_equal(a->start, base + 1);
	assert_int_equal(b->start, base + 5901);
	assert_int_equal(g2->start, base + 11801);
	memset(hs_span_addr(a), 0x5a, hs_span_bytes(a));
	memset(hs_span_addr(b), 0xa5, hs_span_bytes(b));

	/* A released, B committed: side by side, never coalesced */
	hs_page_heap_free(a);
	hs_page_heap_release(SIZE_MAX);
	hs_page_heap_free(b);
	hs_span_t *fa = hs_pagemap_get(base + 1);
	hs_span_t *fb = hs_pagemap_get(base + 5901);
	assert_int_equal(fa->location, HS_SPAN_RELEASED);
	assert_int_equal(fa->npages, 5900);
	assert_int_equal(fb->location, HS_SPAN_FREE);
	assert_int_equal(fb->npages, 5900);
	assert_int_equal(hs_page_heap_is_valid(), 1);

	/* 11800 pages: more than any single free span here (the first
	 * chunk is 8192 pages), exactly A + B */
	int64_t system = hs_stat_get(HS_STAT_system_bytes);
	int64_t released = hs_stat_get(HS_STAT_released_total_bytes);
	int64_t merges = hs_stat_get(HS_STAT_pageheap_merge_count);
	hs_span_t *m = hs_page_heap_alloc(11800, 1);
	assert_non_null(m);
	assert_int_equal(m->start, base + 1);
	assert_int_equal(m->npages, 11800);
	assert_int_equal(m->location, HS_SPAN_IN_USE);
	assert_int_equal(m->zeroed, 0); /* B's pages still hold 0xa5 */
	assert_int_equal(hs_stat_get(HS_STAT_system_bytes), system);
	assert_int_equal(hs_stat_get(HS_STAT_released_total_bytes), released);
	assert_int_equal(hs_stat_get(HS_STAT_pageheap_merge_count), merges + 1);
	/* a large span maps its edges only; the pieces' old edges inside
	 * it are cleared */
	assert_ptr_equal(hs_pagemap_get(m->start), m);
	assert_ptr_equal(hs_pagemap_get(m->start + m->npages - 1), m);
	for (size_t p = 1; p + 1 < m->npages; p++)
		assert_null(hs_pagemap_get(m->start + p));
	assert_int_equal(hs_page_heap_is_valid(), 1);
	/* the memory is usable end to end */
	memset(hs_span_addr(m), 1, hs_span_bytes(m));

	hs_page_heap_free(m);
	hs_page_heap_free(g1);
	hs_page_heap_free(g2);
	hs_page_heap_release(SIZE_MAX);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	free(ballast);
}

static void touch(char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
}

static void test_release_policy(void **state)
{
	(void)state;
	hs_page_heap_release(SIZE_MAX);
	assert_int_equal(committed_free(), 0);

	/* 40 MiB in use: up to 80 MiB free is kept (the old fixed cap
	 * would have released all but 16 MiB of the 60 freed) */
	char *held = malloc(40 * MIB);
	char *gone = malloc(60 * MIB);
	assert_non_null(held);
	assert_non_null(gone);
	touch(held, 40 * MIB);
	touch(gone, 60 * MIB);
	int64_t released = hs_stat_get(HS_STAT_released_total_bytes);
	free(gone);
	assert_true(committed_free() >= 60 * MIB);
	assert_int_equal(hs_stat_get(HS_STAT_released_total_bytes), released);

	/* nothing in use: the cap is the floor again */
	free(held);
	assert_true(committed_free() <= FLOOR);
	assert_true(hs_stat_get(HS_STAT_released_total_bytes) >=
		    released + 100 * MIB - FLOOR);

	/* decay: above the floor, memory free for over a second goes back
	 * at the next free into the page heap; a block freed just now
	 * stays */
	held = malloc(40 * MIB);
	gone = malloc(30 * MIB);
	/* kept between them: freed side by side, gone and late would
	 * merge into one span freed just now (the heap grows in 2 MiB
	 * steps, so they are neighbours) */
	char *sep = malloc(2 * MIB);
	char *late = malloc(2 * MIB);
	assert_non_null(held);
	assert_non_null(gone);
	assert_non_null(sep);
	assert_non_null(late);
	touch(held, 40 * MIB);
	touch(gone, 30 * MIB);
	touch(late, 2 * MIB);
	hs_page_heap_release(SIZE_MAX);
	free(gone);
	assert_true(committed_free() >= 30 * MIB);
	struct timespec ts = {1, 300 * 1000 * 1000};
	nanosleep(&ts, NULL);
	free(late);
	assert_true(committed_free() >= 2 * MIB);
	assert_true(committed_free() <= FLOOR);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	free(held);
	free(sep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_mixed_run),
		cmocka_unit_test(test_release_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
