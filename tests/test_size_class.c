/* SPDX-License-Identifier: MIT */
/*
 * tests/test_size_class.c - size classes: every size maps to the smallest
 * class that fits, waste is bounded, sizes and spans are well formed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/hs_common.h"
#include "core/init.h"
#include "core/size_class.h"

static int setup(void **state)
{
	(void)state;
	hs_init_global();
	return 0;
}

static void test_is_valid(void **state)
{
	(void)state;
	assert_int_equal(hs_size_class_is_valid(), 1);
}

static void test_every_size(void **state)
{
	(void)state;
	for (size_t n = 0; n <= HS_MAX_SMALL_SIZE; n++) {
		unsigned c = hs_size_to_class(n);
		assert_true(c >= 1 && c < HS_NUM_CLASSES);
		size_t cs = hs_classes[c].size;
		assert_true(cs >= n);
		/* waste: 16 bytes below 128, 12.5 % above */
		if (n <= 128)
			assert_true(cs - n < 16 || n == 0);
		else
			assert_true((cs - n) * 8 <= n);
	}
	assert_int_equal(hs_classes[hs_size_to_class(HS_MAX_SMALL_SIZE)].size,
			 HS_MAX_SMALL_SIZE);
}

static void test_class_geometry(void **state)
{
	(void)state;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		const hs_class_info_t *ci = &hs_classes[c];
		size_t span = (size_t)ci->pages * HS_PAGE_SIZE;
		assert_int_equal(ci->size % HS_MIN_ALIGN, 0);
		assert_true(ci->objects >= 1);
		assert_true((size_t)ci->objects * ci->size <= span);
		assert_true((span - (size_t)ci->objects * ci->size) * 8 <=
			    span);
		assert_true(ci->batch >= 2 && ci->batch <= 32);
		assert_true(ci->max_cached >= 1);
		if (c > 1)
			assert_true(ci->size > hs_classes[c - 1].size);
	}
}

static void test_aligned_classes(void **state)
{
	(void)state;
	for (size_t align = 32; align <= HS_PAGE_SIZE; align *= 2) {
		for (size_t n = 1; n <= 65536; n = n * 3 + 1) {
			unsigned c = hs_size_class_aligned(n, align);
			assert_true(c != 0);
			assert_true(hs_classes[c].size >= n);
			assert_int_equal(hs_classes[c].size % align, 0);
		}
	}
	assert_int_equal(hs_size_class_aligned(HS_MAX_SMALL_SIZE + 1, 32), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_valid),
		cmocka_unit_test(test_every_size),
		cmocka_unit_test(test_class_geometry),
		cmocka_unit_test(test_aligned_classes),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
