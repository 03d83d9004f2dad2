// SPDX-License-Identifier: MIT
/*
 * tests/test_region.c - large unsampled blocks in the sampled region
 * (sampled.c hs_region_alloc / hs_region_grow), through the real library
 * (linked, so this program's malloc is heapscope's).  Run with
 * HEAPSCOPE_SAMPLE_RATE=0; the tests that need samples set the period
 * with heapscope_set_sample_period().
 *
 * A block over 256 KiB (the largest size class) and up to
 * HEAPSCOPE_REGION_BLOCK_MAX (64 MiB) takes whole pages of the region
 * with no record; it grows in place into the pages after it, and turns
 * into a sample (or back) on realloc without moving.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "sampled_util.h"

#define PAGE 8192u
#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i += 997)
		p[i] = (unsigned char)(i * 31 + seed);
}

static void check(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i += 997)
		assert_int_equal(p[i], (unsigned char)(i * 31 + seed));
}

/* Which sizes go to the region, their usable size and mallinfo2: a
 * region block counts as a large allocation (hblks / hblkhd) and not as
 * a sample (no record, no sampled pages). */
static void test_placement(void **state)
{
	struct heapscope_sampling_stats s0 = stats();
	struct mallinfo2 m0 = mallinfo2(), m1;
	void *small = malloc(256 * KIB), *p = malloc(256 * KIB + 1);
	void *max = malloc(64 * MIB), *over = malloc(64 * MIB + 1);

	(void)state;
	assert_non_null(small);
	assert_non_null(p);
	assert_non_null(max);
	assert_non_null(over);
	assert_false(in_region(small));
	assert_true(in_region(p));
	assert_true(in_region(max));
	assert_false(in_region(over));
	assert_int_equal((uintptr_t)p % PAGE, 0);
	assert_int_equal(malloc_usable_size(p), 256 * KIB + PAGE);
	assert_int_equal(malloc_usable_size(max), 64 * MIB);
	assert_null(find_record(p));
	m1 = mallinfo2();
	assert_int_equal(m1.hblks, m0.hblks + 3);
	assert_int_equal(m1.hblkhd, m0.hblkhd + 256 * KIB + PAGE + 64 * MIB +
					    malloc_usable_size(over));
	assert_int_equal(stats().pages_bytes, s0.pages_bytes);
	assert_int_equal(stats().live, s0.live);
	free(p);
	free(max);
	free(over);
	free(small);
	m1 = mallinfo2();
	assert_int_equal(m1.hblks, m0.hblks);
	assert_int_equal(m1.hblkhd, m0.hblkhd);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* realloc: growth in place into free pages after the block, a move
 * when the next block is in use, a shrink by less than half kept, a
 * shrink to a small size moved out of the region; contents kept. */
static void test_region_realloc(void **state)
{
	unsigned char *p, *q, *blocker;

	(void)state;
	malloc_trim(0);
	p = malloc(1 * MIB);
	fill(p, 1 * MIB, 1);
	/* the region's frontier (or a free run) follows it */
	q = realloc(p, 3 * MIB / 2);
	assert_ptr_equal(q, p);
	assert_int_equal(malloc_usable_size(q), 3 * MIB / 2);
	check(q, 1 * MIB, 1);
	fill(q, 3 * MIB / 2, 2);
	blocker = malloc(512 * KIB);
	assert_ptr_equal(blocker, q + 3 * MIB / 2);
	p = realloc(q, 3 * MIB);
	assert_ptr_not_equal(p, q);
	assert_true(in_region(p));
	check(p, 3 * MIB / 2, 2);
	q = realloc(p, 2 * MIB);
	assert_ptr_equal(q, p);
	assert_int_equal(malloc_usable_size(q), 3 * MIB);
	p = realloc(q, 100);
	assert_false(in_region(p));
	check(p, 100, 2);
	free(p);
	free(blocker);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* realloc growing a block past its size class from 64 KiB
 * (HS_REGION_GROW_MIN) on: it moves once, into the region, and its later
 * growth is in place while the pages after it are free; below 64 KiB it
 * moves from class to class as before.  Steps of 12.5 % (Python's list
 * growth) from 40000 B to 263320 B: 4 below 64 KiB, each a move or within
 * the class, then 12 from 72081 B on: one move into the region, 11 in
 * place. */
static void test_region_realloc_growable(void **state)
{
	unsigned char *p, *q, *blocker;
	size_t n = 40000, moves = 0, in_place = 0, region_steps = 0;
	uint64_t large0 = mallinfo2().hblks;

	(void)state;
	malloc_trim(0);
	p = malloc(n);
	fill(p, n, 5);
	assert_false(in_region(p));
	while (n < 250000) {
		size_t m = n + n / 8;
		q = realloc(p, m);
		assert_non_null(q);
		check(q, n, 5);
		fill(q, m, 5);
		assert_int_equal(in_region(q), m >= 64 * KIB);
		if (m >= 64 * KIB) {
			/* whole region pages, as any region block */
			assert_int_equal(malloc_usable_size(q),
					 (m + PAGE - 1) / PAGE * PAGE);
			in_place += q == p;
			region_steps++;
		}
		moves += q != p;
		p = q;
		n = m;
	}
	print_message("40000 -> %zu B: %zu moves, %zu of %zu steps from "
		      "64 KiB in place\n",
		      n, moves, in_place, region_steps);
	assert_int_equal(region_steps, 12);
	assert_int_equal(in_place, region_steps - 1);
	assert_true(moves >= 2);
	assert_int_equal(mallinfo2().hblks, large0 + 1);
	/* a block right after it: the next growth moves it (a copy), and
	 * it stays a region block */
	blocker = malloc(300 * KIB);
	assert_ptr_equal(blocker, p + malloc_usable_size(p));
	q = realloc(p, n + n / 8);
	assert_ptr_not_equal(q, p);
	assert_true(in_region(q));
	check(q, n, 5);
	/* shrinking below half: out of the region */
	p = realloc(q, 1000);
	assert_false(in_region(p));
	check(p, 1000, 5);
	free(p);
	free(blocker);
	assert_int_equal(mallinfo2().hblks, large0);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* A block turns into a sample on realloc, and back, without moving:
 * sampled growth gives it a record (sample_alloc), unsampled growth
 * releases it (sample_free). */
static void test_sampled_transitions(void **state)
{
	struct heapscope_sampling_stats s0 = stats(), s1;
	const struct heapscope_record *rec;
	unsigned char *p, *q;

	(void)state;
	malloc_trim(0);
	p = malloc(1 * MIB); /* period 0: unsampled, in the region */
	assert_true(in_region(p));
	assert_null(find_record(p));
	fill(p, 1 * MIB, 3);
	assert_int_equal(heapscope_set_sample_period(1), 0);
	/* While sampling is off a thread looks at the period every 128 MiB
	 * (HS_SAMPLER_OFF_COUNTER): one block that large makes it look. */
	free(malloc(129 * MIB));
	s0 = stats();
	q = realloc(p, 2 * MIB); /* sampled: a record, same pages */
	assert_ptr_equal(q, p);
	rec = find_record(q);
	assert_non_null(rec);
	assert_int_equal(rec->requested, 2 * MIB);
	assert_int_equal(rec->span_bytes, 2 * MIB);
	check(q, 1 * MIB, 3);
	s1 = stats();
	assert_int_equal(s1.samples_total, s0.samples_total + 1);
	assert_int_equal(s1.pages_bytes, s0.pages_bytes + 2 * MIB);
	assert_int_equal(heapscope_set_sample_period(0), 0);
	p = realloc(q, 3 * MIB); /* unsampled: the record goes */
	assert_ptr_equal(p, q);
	assert_null(find_record(p));
	check(p, 1 * MIB, 3);
	s1 = stats();
	assert_int_equal(s1.frees_total, s0.frees_total + 1);
	assert_int_equal(s1.pages_bytes, s0.pages_bytes);
	assert_int_equal(s1.live, s0.live);
	assert_int_equal(malloc_usable_size(p), 3 * MIB);
	free(p);
	assert_int_equal(stats().live, s0.live);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* mallinfo2 counts a sampled block too: one without a proxy (over
 * HEAPSCOPE_PROXY_MAX, 4096) as a large allocation of its allocated
 * size, like an unsampled one. */
static void test_mallinfo_sampled(void **state)
{
	struct mallinfo2 m0, m1;
	void *p;

	(void)state;
	assert_int_equal(heapscope_set_sample_period(1), 0);
	free(malloc(129 * MIB)); /* the thread looks at the period */
	m0 = mallinfo2();
	p = malloc(1 * MIB);
	assert_non_null(find_record(p));
	m1 = mallinfo2();
	assert_int_equal(m1.hblks, m0.hblks + 1);
	assert_int_equal(m1.hblkhd, m0.hblkhd + 1 * MIB);
	assert_int_equal(m1.uordblks, m0.uordblks + 1 * MIB);
	free(p);
	m1 = mallinfo2();
	assert_int_equal(m1.hblks, m0.hblks);
	assert_int_equal(m1.hblkhd, m0.hblkhd);
	assert_int_equal(heapscope_set_sample_period(0), 0);
	free(malloc(1)); /* back to period 0 for the next tests */
}

/* calloc of a region block reads as zeros whether its pages come
 * decommitted / never used (not cleared) or freed dirty and kept. */
static void test_region_calloc(void **state)
{
	unsigned char *p, *q;

	(void)state;
	malloc_trim(0); /* no kept pages: the next block is fresh */
	q = calloc(1, 2 * MIB);
	assert_true(in_region(q));
	for (size_t i = 0; i < 2 * MIB; i += 4096)
		assert_int_equal(q[i], 0);
	memset(q, 0xa5, 2 * MIB);
	free(q); /* kept committed, dirty */
	p = calloc(1, 2 * MIB);
	assert_ptr_equal(p, q);
	for (size_t i = 0; i < 2 * MIB; i++)
		if (p[i])
			fail_msg("byte %zu of a recycled calloc block is %d", i,
				 p[i]);
	free(p);
}

/* A block no kept run fits takes a kept (dirty) run and the fresh pages
 * after it (merge_warm); calloc clears the kept run's pages only: the
 * fresh ones read as zeros and stay out of RSS.  Clearing all of it made
 * a calloc(8 GiB) at period 1 resident in full (killed in a 256 MiB
 * cgroup) when a few freed pages happened to sit before it. */
static void test_region_calloc_merged(void **state)
{
	unsigned char *a, *b, *p, vec[2 * MIB / 4096];

	(void)state;
	malloc_trim(0);
	a = malloc(40 * PAGE);
	b = malloc(40 * PAGE);
	assert_true(in_region(a) && in_region(b));
	memset(b, 0xa5, 40 * PAGE);
	free(b); /* kept committed, dirty */
	p = calloc(1, 2 * MIB);
	assert_ptr_equal(p, b);
	/* before reading it: only the kept run's pages are resident */
	assert_int_equal(mincore(p, 2 * MIB, vec), 0);
	size_t resident = 0;
	for (size_t i = 0; i < sizeof(vec); i++)
		resident += vec[i] & 1;
	print_message("resident 4 KiB pages of the 2 MiB block: %zu\n",
		      resident);
	assert_true(resident <= 40 * PAGE / 4096);
	for (size_t i = 0; i < 2 * MIB; i++)
		if (p[i])
			fail_msg("byte %zu of a merged calloc block is %d", i,
				 p[i]);
	free(p);
	free(a);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* Kept runs are reused best fit: of a 140-page and a newer 250-page
 * run, a 135-page block takes the 140-page one (the first that fits in
 * their size bucket would be the newer). */
static void test_region_best_fit(void **state)
{
	char *a, *b, *c, *s1, *s2;

	(void)state;
	malloc_trim(0);
	a = malloc(140 * PAGE);
	s1 = malloc(300 * KIB);
	b = malloc(250 * PAGE);
	s2 = malloc(300 * KIB);
	assert_true(in_region(a) && in_region(b));
	free(a);
	free(b);
	c = malloc(135 * PAGE);
	assert_ptr_equal(c, a);
	free(c);
	free(s1);
	free(s2);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* The old copy of a block realloc moved (region/pages_cache.c
 * hs_pages_moved_copy): when the new copy took only fresh pages (no kept
 * run fitted it), the old one's pages go back at once, as a buffer that
 * doubles leaves sizes that are not asked for again; when the new copy
 * took a kept run, the old one is kept too, for the next block of its
 * size (a buffer grown again and again from small). */
static void test_region_realloc_moved(void **state)
{
	unsigned char *a, *b, *c, *q, *sep[3], vec[MIB / 4096];

	(void)state;
	malloc_trim(0);
	a = malloc(1 * MIB);
	sep[0] = malloc(300 * KIB); /* a cannot grow in place */
	assert_true(in_region(a) && in_region(sep[0]));
	assert_ptr_equal(sep[0], a + MIB);
	fill(a, MIB, 3);
	q = realloc(a, 4 * MIB); /* fresh pages: a goes back */
	assert_true(in_region(q) && q != a);
	check(q, MIB, 3);
	assert_int_equal(stats().cached_bytes, 0);
	assert_int_equal(mincore(a, MIB, vec), 0);
	for (size_t i = 0; i < sizeof(vec); i++)
		assert_int_equal(vec[i] & 1, 0);

	free(q); /* kept: 4 MiB */
	assert_int_equal(stats().cached_bytes, 4 * MIB);
	c = malloc(1 * MIB);
	sep[1] = malloc(300 * KIB);
	sep[2] = malloc(300 * KIB);
	assert_true(in_region(c) && sep[1] == c + MIB);
	fill(c, MIB, 4);
	/* c and the separators took 1.6 MiB of the kept run */
	size_t kept = stats().cached_bytes;
	b = realloc(c, 2 * MIB); /* the rest of the kept run: c is kept */
	assert_true(in_region(b) && b != c);
	check(b, MIB, 4);
	print_message("kept before %zu KiB, after %llu KiB\n", kept >> 10,
		      (unsigned long long)stats().cached_bytes >> 10);
	assert_int_equal(stats().cached_bytes, kept - 2 * MIB + MIB);
	free(b);
	for (int i = 0; i < 3; i++)
		free(sep[i]);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* Leaves free committed spans in the page heap: 16 blocks of 100 KiB (a
 * size class; its empty spans go back to the page heap) written and
 * freed.  Returns the page heap's free committed bytes after. */
static uint64_t leave_page_heap_free(void)
{
	struct heapscope_allocator_stats st;
	unsigned char *b[16];

	for (int i = 0; i < 16; i++) {
		b[i] = malloc(100 * KIB);
		assert_false(in_region(b[i]));
		memset(b[i], 7, 100 * KIB);
	}
	for (int i = 0; i < 16; i++)
		free(b[i]);
	assert_int_equal(heapscope_get_allocator_stats(&st, sizeof(st)), 0);
	return st.pageheap_free_bytes;
}

/* Swap on fault-in across the two pools (core/large.c
 * region_faulted): a block of the region that takes fresh pages
 * sends as much of the page heap's free committed memory back, as the
 * page heap does when it grows itself.  With committed free spans left
 * in the page heap (leave_page_heap_free), a region block larger than
 * all of them, cut from fresh pages, leaves none.  Before, they stayed
 * committed beside it. */
static void test_region_fresh_releases_page_heap(void **state)
{
	struct heapscope_allocator_stats st;
	unsigned char *big;

	(void)state;
	malloc_trim(0);
	uint64_t before = leave_page_heap_free();
	print_message("page heap free committed before: %llu KiB\n",
		      (unsigned long long)before >> 10);
	assert_true(before >= 8 * 100 * KIB);
	big = malloc(before + 2 * MIB);
	assert_true(in_region(big));
	assert_int_equal(heapscope_get_allocator_stats(&st, sizeof(st)), 0);
	assert_int_equal(st.pageheap_free_bytes, 0);
	free(big);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* A block of the region grown within the pages it has takes no fresh
 * page: the page heap keeps its free committed memory.  (Before, the count
 * of fresh pages left for core/large.c was an earlier block's, big's 2 MiB
 * here, and the page heap gave that much back.)  p, sampled, holds 60 KiB
 * (its class's size, 61440) on 8 pages; realloc to 64 KiB, the least a
 * block of the region grows to (HS_REGION_GROW_MIN), stays on them. */
static void test_region_grow_within_pages(void **state)
{
	struct heapscope_allocator_stats st;
	unsigned char *p, *q, *big;

	(void)state;
	malloc_trim(0);
	assert_int_equal(heapscope_set_sample_period(1), 0);
	free(malloc(129 * MIB)); /* the thread looks at the period */
	p = malloc(60 * KIB);
	assert_non_null(find_record(p));
	assert_int_equal(malloc_usable_size(p), 60 * KIB);
	assert_int_equal(heapscope_set_sample_period(0), 0);
	free(malloc(1));       /* back to period 0 */
	big = malloc(2 * MIB); /* unsampled, on pages never used */
	assert_true(in_region(big));
	assert_null(find_record(big));
	uint64_t before = leave_page_heap_free();
	assert_true(before > 0);
	q = realloc(p, 64 * KIB);
	assert_ptr_equal(q, p);
	assert_null(find_record(q)); /* grown unsampled, in place */
	assert_int_equal(heapscope_get_allocator_stats(&st, sizeof(st)), 0);
	assert_int_equal(st.pageheap_free_bytes, before);
	free(q);
	free(big);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* malloc_trim gives the region's kept pages back. */
static void test_region_trim(void **state)
{
	void *b[8];

	(void)state;
	for (int i = 0; i < 8; i++) {
		b[i] = malloc(4 * MIB);
		memset(b[i], 1, 4 * MIB);
	}
	for (int i = 0; i < 8; i++)
		free(b[i]);
	assert_true(stats().cached_bytes >= 32 * MIB);
	malloc_trim(0);
	assert_int_equal(stats().cached_bytes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placement),
		cmocka_unit_test(test_region_realloc),
		cmocka_unit_test(test_region_realloc_growable),
		cmocka_unit_test(test_sampled_transitions),
		cmocka_unit_test(test_mallinfo_sampled),
		cmocka_unit_test(test_region_calloc),
		cmocka_unit_test(test_region_calloc_merged),
		cmocka_unit_test(test_region_best_fit),
		cmocka_unit_test(test_region_realloc_moved),
		cmocka_unit_test(test_region_fresh_releases_page_heap),
		cmocka_unit_test(test_region_grow_within_pages),
		cmocka_unit_test(test_region_trim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
