// SPDX-License-Identifier: MIT
/*
 * tests/test_calloc_zero.c - calloc returns zeroed memory on every path,
 * above all the ones that skip the memset (core/alloc.c hs_calloc):
 *  - a large page-heap span the page heap marks zeroed (span->zeroed:
 *    fresh from the OS or released with MADV_DONTNEED, never handed out
 *    since; core/page_heap.c carve_locked);
 *  - a large block in the sampled region whose pages are fresh or
 *    decommitted (hs_region_dirty clears the kept run only).
 * Each path is driven into its tricky cases: a block written, freed and
 * calloc'd again in the same place (dirty, kept committed), released to
 * the OS by malloc_trim and reused, grown in place by realloc after the
 * calloc, aligned (head and tail trimmed off a bigger span), and a long
 * random sequence of mixed sizes with trims in between.  Small objects
 * (always cleared) are covered too: a dirty object freed and calloc'd
 * back.
 *
 * On the static library (this program's malloc is heapscope's), with
 * sampling off, twice (set by ctest): HEAPSCOPE_REGION_BLOCK_MAX=0 (large
 * blocks in the page heap: the span's zeroed flag is also asserted, so a
 * flag set where the memory is dirty fails on the contents and a flag
 * lost where it is zero fails on the flag) and the default (large blocks
 * in the region).  The same address coming back is asserted where the
 * allocator is deterministic (sampling off, one thread), so each case
 * exercises the path it names.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/pagemap.h"
#include "core/span.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* large blocks in the page heap (HEAPSCOPE_REGION_BLOCK_MAX=0) */
static int page_heap_mode;

/* an opaque size: the compiler sees no constant calloc to fold */
static size_t opaque(size_t n)
{
	volatile size_t v = n;
	return v;
}

/* fails at the first non-zero byte of p[0, n) */
static void assert_zero(const unsigned char *p, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			fail_msg("%s: byte %zu of %zu is %#x", what, i, n,
				 p[i]);
}

/* p's page-heap large span (NULL: not a page-heap large block) */
static hs_span_t *large_span(const void *p)
{
	hs_span_t *s = hs_pagemap_lookup(p);
	if (!s || s->size_class || s->location != HS_SPAN_IN_USE)
		return NULL;
	return s;
}

/* In page-heap mode: p is a page-heap large block whose zeroed flag is
 * `want` (what calloc read when it decided to skip or clear). */
static void expect_flag(const void *p, int want)
{
	if (!page_heap_mode)
		return;
	hs_span_t *s = large_span(p);
	assert_non_null(s);
	assert_int_equal(s->zeroed, want);
}

/* A dirty object of each small size freed and calloc'd back: the same
 * object (thread-cache LIFO), all zero, the free-list link included.
 * Each size is taken and freed once first: a class over 4 KiB is not
 * cached before the thread's second refill of it (thread_cache.c,
 * ONCE_BYTES), so its first block goes back to the page heap. */
static void test_small_dirty_reuse(void **state)
{
	static const size_t sizes[] = {1,    16,   24,	  100,	     1000,
				       4096, 8000, 16000, 100 * KIB, 256 * KIB};
	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		free(malloc(opaque(n)));
		unsigned char *p = malloc(opaque(n));
		assert_non_null(p);
		memset(p, 0xa5, malloc_usable_size(p));
		free(p);
		unsigned char *q = calloc(1, opaque(n));
		assert_ptr_equal(q, p);
		assert_zero(q, n, "small, freed dirty");
		/* calloc'd, written, freed, calloc'd */
		memset(q, 0x5a, n);
		free(q);
		q = calloc(opaque(n), 1);
		assert_ptr_equal(q, p);
		assert_zero(q, n, "small, calloc'd and written");
		free(q);
	}
}

/* A large block on memory no one has used: zero, and in the page heap
 * flagged so (calloc skipped the memset). */
static void test_large_fresh(void **state)
{
	(void)state;
	malloc_trim(0);
	unsigned char *p = calloc(1, opaque(3 * MIB));
	assert_non_null(p);
	expect_flag(p, 1);
	assert_zero(p, 3 * MIB, "large, fresh");
	free(p);
}

/* Written, freed (kept committed: under the release floor), calloc'd in
 * the same place: not flagged zero, cleared. */
static void test_large_dirty_reuse(void **state)
{
	(void)state;
	unsigned char *p = malloc(opaque(3 * MIB));
	assert_non_null(p);
	memset(p, 0xa5, 3 * MIB);
	free(p);
	unsigned char *q = calloc(1, opaque(3 * MIB));
	assert_ptr_equal(q, p);
	assert_zero(q, 3 * MIB, "large, reused dirty");
	expect_flag(q, 0);
	free(q);
}

/* Written, freed, released to the OS (malloc_trim: MADV_DONTNEED), then
 * calloc'd in the same place: flagged zero again, and reads zero. */
static void test_large_released_reuse(void **state)
{
	(void)state;
	unsigned char *p = malloc(opaque(3 * MIB));
	assert_non_null(p);
	memset(p, 0xa5, 3 * MIB);
	free(p);
	malloc_trim(0);
	unsigned char *q = calloc(1, opaque(3 * MIB));
	assert_ptr_equal(q, p);
	expect_flag(q, 1);
	assert_zero(q, 3 * MIB, "large, released and reused");
	/* and once more dirty, without a release in between */
	memset(q, 0x5a, 3 * MIB);
	free(q);
	p = calloc(1, opaque(3 * MIB));
	assert_ptr_equal(p, q);
	assert_zero(p, 3 * MIB, "large, released, reused, dirty again");
	expect_flag(p, 0);
	free(p);
}

/* Two neighbours, the first released and the second freed dirty: a
 * block over both (or over either) must be cleared where it is dirty. */
static void test_large_mixed_neighbours(void **state)
{
	(void)state;
	malloc_trim(0);
	unsigned char *a = malloc(opaque(2 * MIB));
	unsigned char *b = malloc(opaque(2 * MIB));
	assert_non_null(a);
	assert_non_null(b);
	memset(a, 0xa5, 2 * MIB);
	memset(b, 0x5a, 2 * MIB);
	free(a);
	malloc_trim(0); /* a released */
	free(b);	/* b committed, dirty */
	unsigned char *p = calloc(1, opaque(4 * MIB));
	assert_non_null(p);
	assert_zero(p, 4 * MIB, "large, over a released and a dirty run");
	unsigned char *q = calloc(1, opaque(2 * MIB));
	assert_non_null(q);
	assert_zero(q, 2 * MIB, "large, beside the merged block");
	free(q);
	free(p);
}

/* realloc after calloc keeps the zeros (shrinking, growing in place into
 * fresh pages, moving); the grown block written and freed comes back
 * cleared (its span's flag was set when it was first handed out). */
static void test_realloc_after_calloc(void **state)
{
	(void)state;
	malloc_trim(0);
	unsigned char *p = calloc(1, opaque(1 * MIB));
	assert_non_null(p);
	unsigned char *q = realloc(p, opaque(3 * MIB)); /* grows */
	assert_non_null(q);
	assert_zero(q, 1 * MIB, "calloc then realloc up");
	memset(q, 0xa5, 3 * MIB);
	unsigned char *r = realloc(q, opaque(2 * MIB)); /* shrinks */
	assert_non_null(r);
	free(r);
	unsigned char *z = calloc(1, opaque(3 * MIB));
	assert_non_null(z);
	assert_zero(z, 3 * MIB, "calloc after a grown block was freed");
	free(z);

	/* small to large and large to small */
	unsigned char *s = calloc(1, opaque(100));
	assert_non_null(s);
	unsigned char *t = realloc(s, opaque(512 * KIB));
	assert_non_null(t);
	assert_zero(t, 100, "small calloc then realloc to large");
	unsigned char *u = calloc(1, opaque(512 * KIB));
	assert_non_null(u);
	unsigned char *v = realloc(u, opaque(1000));
	assert_non_null(v);
	assert_zero(v, 1000, "large calloc then realloc to small");
	free(v);
	free(t);
}

/* An aligned large block (head and tail of a bigger span given back),
 * written and freed: calloc over the same pages is cleared. */
static void test_aligned_then_calloc(void **state)
{
	(void)state;
	void *p = NULL;
	assert_int_equal(posix_memalign(&p, 256 * KIB, opaque(1 * MIB)), 0);
	assert_true(((uintptr_t)p & (256 * KIB - 1)) == 0);
	memset(p, 0xa5, 1 * MIB);
	free(p);
	for (int i = 0; i < 4; i++) {
		unsigned char *c = calloc(1, opaque(1 * MIB + i * 8 * KIB));
		assert_non_null(c);
		assert_zero(c, 1 * MIB + i * 8 * KIB, "after an aligned block");
		free(c);
	}
}

/* 3000 random operations on 48 slots, sizes log-uniform from 1 B to
 * 4 MiB (fixed seed): every block is filled with a non-zero byte before
 * it is freed, every calloc is checked whole; a malloc_trim every 250
 * operations mixes released spans in. */
static void test_random_sequence(void **state)
{
	(void)state;
	enum { SLOTS = 48, OPS = 3000 };
	unsigned char *slot[SLOTS] = {0};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int op = 0; op < OPS; op++) {
		/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned k = (unsigned)(x % SLOTS);
		if (slot[k]) {
			memset(slot[k], (int)(1 + op % 255),
			       malloc_usable_size(slot[k]));
			free(slot[k]);
			slot[k] = NULL;
			continue;
		}
		/* 2^b plus a uniform part of 2^b, b uniform in 0 .. 21:
		 * 1 B .. 4 MiB, log-uniform */
		unsigned bits = (unsigned)((x >> 20) % 22);
		size_t n = ((size_t)1 << bits) +
			   (size_t)(x >> 32) % ((size_t)1 << bits);
		slot[k] = calloc(1, opaque(n));
		assert_non_null(slot[k]);
		assert_zero(slot[k], n, "random sequence");
		if (op % 250 == 249)
			malloc_trim(0);
	}
	for (unsigned k = 0; k < SLOTS; k++)
		free(slot[k]);
}

int main(void)
{
	const char *v = getenv("HEAPSCOPE_REGION_BLOCK_MAX");
	page_heap_mode = v && strcmp(v, "0") == 0;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_dirty_reuse),
		cmocka_unit_test(test_large_fresh),
		cmocka_unit_test(test_large_dirty_reuse),
		cmocka_unit_test(test_large_released_reuse),
		cmocka_unit_test(test_large_mixed_neighbours),
		cmocka_unit_test(test_realloc_after_calloc),
		cmocka_unit_test(test_aligned_then_calloc),
		cmocka_unit_test(test_random_sequence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
