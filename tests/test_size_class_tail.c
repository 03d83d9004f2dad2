/* SPDX-License-Identifier: MIT */
/*
 * tests/test_size_class_tail.c - span geometry of the size classes: the
 * unused tail of each class's span (span bytes not a multiple of the
 * object size) is small, and the span is no longer than it takes.  The
 * expected figures are computed here by brute force over span lengths,
 * not taken from size_class.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hs_common.h"
#include "core/init.h"
#include "core/size_class.h"

/* the longest span size_class.c searches (pages), unless one object
 * needs more */
#define SEARCH_PAGES 16
/* classes of at most SMALL_SIZE bytes: spans of at least SMALL_PAGES */
#define SMALL_SIZE 128
#define SMALL_PAGES 8

static int setup(void **state)
{
	(void)state;
	hs_init_global();
	return 0;
}

static size_t tail_of(size_t pages, size_t size)
{
	return pages * HS_PAGE_SIZE % size;
}

/* every class (from SMALL_PAGES pages up when at most SMALL_SIZE
 * bytes): tail at most 1/64 of the span when some span of up to
 * SEARCH_PAGES pages allows it, and then the shortest such span; else the
 * least tail (as a fraction) any of those spans leaves.  Never above 1/32. */
static void test_tail_bounded(void **state)
{
	(void)state;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		const hs_class_info_t *ci = &hs_classes[c];
		size_t first = (ci->size + HS_PAGE_SIZE - 1) / HS_PAGE_SIZE;
		if (ci->size <= SMALL_SIZE)
			first = SMALL_PAGES;
		size_t last = first > SEARCH_PAGES ? first : SEARCH_PAGES;
		size_t shortest_ok = 0;
		double least = 1.0;
		for (size_t p = first; p <= last; p++) {
			size_t span = p * HS_PAGE_SIZE;
			double frac =
				(double)tail_of(p, ci->size) / (double)span;
			if (!shortest_ok && tail_of(p, ci->size) * 64 <= span)
				shortest_ok = p;
			if (frac < least)
				least = frac;
		}
		size_t span = (size_t)ci->pages * HS_PAGE_SIZE;
		assert_true(ci->pages >= first && ci->pages <= last);
		assert_int_equal((size_t)ci->objects, span / ci->size);
		size_t tail = span - (size_t)ci->objects * ci->size;
		assert_true(tail * 32 <= span);
		if (shortest_ok) {
			assert_int_equal(ci->pages, shortest_ok);
			assert_true(tail * 64 <= span);
		} else {
			assert_true((double)tail / (double)span <=
				    least + 1e-12);
		}
	}
}

/* a request's share of span bytes: above 128 bytes, class rounding
 * (<= 1/8) and the tail (<= 1/32) together stay within
 * (1 + 1/8) * 32/31 of the request; gawk's 11200-byte node pools, which
 * TCMalloc's 1/8 rule put in 3-page spans of 2 objects (12288 bytes
 * each), take at most 1 % more than their size */
static void test_span_bytes_per_request(void **state)
{
	(void)state;
	for (size_t n = 129; n <= HS_MAX_SMALL_SIZE; n += 7) {
		const hs_class_info_t *ci = &hs_classes[hs_size_to_class(n)];
		double per = (double)ci->pages * HS_PAGE_SIZE / ci->objects;
		assert_true(per <= (double)n * 1.125 * 32.0 / 31.0);
	}
	const hs_class_info_t *ci = &hs_classes[hs_size_to_class(11200)];
	double per = (double)ci->pages * HS_PAGE_SIZE / ci->objects;
	assert_true(per <= 11200 * 1.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tail_bounded),
		cmocka_unit_test(test_span_bytes_per_request),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
