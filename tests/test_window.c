// SPDX-License-Identifier: MIT
/*
 * test_window.c - cmocka tests of the collector's window profiles
 * (window.c: allocs, lifetime, peak), the fragmentation attributions
 * (fragmentation.c) on synthetic samples, and residency.c on this
 * process's own pages (present / not present; zero page and kpageflags
 * only as root).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "profiles.h"

static struct hs_sample mk(uint64_t seq, uint64_t r, uint64_t a, uint64_t w,
			   uint64_t leaf, uint64_t t, uint32_t tid)
{
	struct hs_sample s = {.seq = seq,
			      .requested = r,
			      .allocated = a,
			      .weight = w,
			      .depth = 2,
			      .time_ns = t,
			      .tid = tid};

	s.stack[0] = leaf;
	s.stack[1] = 0x1000;
	return s;
}

static void test_lifetime(void **state)
{
	struct hs_window *w = hs_window__new(1000);
	struct hs_profile *p = hs_profile__new();
	uint64_t fstack[2] = {0x77, 0x1000};
	struct hs_stack_agg *aggs;
	size_t n;

	(void)state;
	/* r = 99, W = 100: one object each; lifetimes 10, 30 (same thread),
	 * and one allocated before the window (not counted) */
	struct hs_sample a = mk(1, 99, 112, 100, 0x10, 2000, 5),
			 b = mk(2, 99, 112, 100, 0x10, 3000, 5),
			 old = mk(3, 99, 112, 100, 0x10, 500, 5);

	assert_int_equal(hs_profile__alloc(p, &a), 0);
	hs_window__live_alloc(w, &a, p);
	assert_int_equal(hs_profile__alloc(p, &b), 0);
	hs_window__live_alloc(w, &b, p);
	assert_int_equal(hs_profile__alloc(p, &old), 0);
	hs_window__live_alloc(w, &old, p);
	hs_window__live_free(w, &a, 2010, 5, fstack, 2);
	hs_window__live_free(w, &b, 3030, 6, fstack, 2);
	hs_window__live_free(w, &old, 3030, 5, fstack, 2);
	assert_int_equal(hs_window__lifetime(w, &aggs, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(aggs[0].samples, 2);
	assert_true(aggs[0].objects > 1.99 && aggs[0].objects < 2.01);
	assert_true(hs_agg_value(&aggs[0], HS_VALUE_LIFETIME_MEAN) > 19.9 &&
		    hs_agg_value(&aggs[0], HS_VALUE_LIFETIME_MEAN) < 20.1);
	assert_true(aggs[0].lt_min == 10 && aggs[0].lt_max == 30);
	assert_true(aggs[0].same_thread > 0.99 && aggs[0].same_thread < 1.01);
	/* combined stack: the free frames not shared with the allocation
	 * stack (0x1000, the root of both, is shared), marker, alloc frames */
	assert_int_equal(aggs[0].depth, 4);
	assert_true(aggs[0].stack[0] == 0x77 &&
		    aggs[0].stack[1] == HS_FREE_MARKER &&
		    aggs[0].stack[2] == 0x10 && aggs[0].stack[3] == 0x1000);
	assert_string_equal(hs_window__sym(NULL, HS_FREE_MARKER), "[free]");
	free(aggs);
	hs_profile__free(p);
	hs_window__free(w);
}

static void test_peak(void **state)
{
	struct hs_window *w = hs_window__new(0);
	struct hs_profile *p = hs_profile__new();
	struct hs_stack_agg *aggs;
	double total;
	size_t n;

	(void)state;
	/* 10 objects of 1000 bytes from leaf 0x20, then all freed, then one
	 * from 0x30: the peak is the 10 */
	for (uint64_t i = 1; i <= 10; i++) {
		struct hs_sample s = mk(i, 999, 1000, 1000, 0x20, 10, 1);

		assert_int_equal(hs_profile__alloc(p, &s), 0);
		hs_window__live_alloc(w, &s, p);
	}
	for (uint64_t i = 1; i <= 10; i++) {
		hs_window__live_free(w, hs_profile__get(p, i), 20, 1, NULL, 0);
		hs_profile__free_seq(p, i);
	}
	struct hs_sample s = mk(11, 999, 1000, 1000, 0x30, 30, 1);

	hs_profile__alloc(p, &s);
	hs_window__live_alloc(w, &s, p);
	assert_int_equal(hs_window__peak(w, &aggs, &n, &total), 0);
	assert_int_equal(n, 1);
	assert_true(aggs[0].stack[0] == 0x20);
	assert_true(total > 9999 && total < 10001);
	assert_true(aggs[0].inuse > 9999 && aggs[0].inuse < 10001);
	free(aggs);
	hs_profile__free(p);
	hs_window__free(w);
}

static void test_fragmentation(void **state)
{
	struct hs_profile *p = hs_profile__new();
	struct hs_stack_agg *aggs;
	size_t n;

	(void)state;
	/* two samples in a 8 KiB span of 256-byte objects with 2 live: each
	 * carries (8192 - 512) / 2 = 3840 bytes per object it stands for */
	struct hs_sample a = mk(1, 255, 256, 256, 0x40, 1, 1),
			 b = mk(2, 255, 256, 512, 0x50, 1, 1);

	a.proxy = b.proxy = 1;
	a.pspan.bytes = b.pspan.bytes = 8192;
	a.pspan.live = b.pspan.live = 2;
	a.pspan.objects = b.pspan.objects = 32;
	a.pspan.updated_ns = b.pspan.updated_ns = 1;
	hs_profile__alloc(p, &a);
	hs_profile__alloc(p, &b);
	assert_int_equal(hs_fragmentation__aggregate(p, &aggs, &n), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		double want = aggs[i].stack[0] == 0x40 ? 3840 : 7680;

		assert_true(aggs[i].frag > want - 1 && aggs[i].frag < want + 1);
		/* same age: age-weighted = proxy */
		assert_true(aggs[i].frag_age > want - 1 &&
			    aggs[i].frag_age < want + 1);
	}
	free(aggs);
	hs_profile__free(p);
}

static void test_residency_self(void **state)
{
	size_t page = 4096, n = 8;
	char *m = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hs_sample s = {.seq = 1, .requested = n * page - 1,
			      .allocated = n * page, .weight = n * page};
	struct hs_sample *ss[1] = {&s};
	struct hs_residency *r;
	volatile char sink;

	(void)state;
	assert_true(m != MAP_FAILED);
	s.ptr = (uintptr_t)m;
	memset(m, 1, 3 * page);	  /* pages 0-2 resident */
	sink = m[5 * page]; /* page 5: read only (the zero page, or on
			     * some kernels a page of its own) */
	(void)sink;
	assert_int_equal(hs_residency__open(&r, getpid()), 0);
	assert_int_equal(hs_residency__scan(r, ss, 1), 0);
	assert_int_equal(s.res.valid, 1);
	assert_int_equal(s.res.pages, 8);
	assert_int_equal(s.res.present, 4);
	assert_int_equal(s.res.swapped, 0);
	assert_true(s.res.zero <= 1);
	assert_true(hs_res_fraction(&s.res, HS_VALUE_RESIDENT) ==
		    (4.0 - s.res.zero) / 8);
	assert_true(hs_res_fraction(&s.res, HS_VALUE_NOT_RESIDENT) ==
		    (4.0 + s.res.zero) / 8);
	/* garbage addresses are refused, not read */
	s.ptr = ~0ull - 10;
	assert_int_equal(hs_residency__scan(r, ss, 1), 0);
	assert_int_equal(s.res.valid, 0);
	hs_residency__close(r);
	munmap(m, n * page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifetime),
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_fragmentation),
		cmocka_unit_test(test_residency_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
