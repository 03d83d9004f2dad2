/* SPDX-License-Identifier: MIT */
/*
 * tests/test_fastpath_layout.c - the offsets the fast paths add to the
 * thread cache's address (h21-fastpath).
 *
 * - The size -> class table holds class << HS_CLASS_TABLE_SHIFT, the
 *   byte offset of the class's list in hs_tcache_t: for every size up to
 *   HS_MAX_SMALL_SIZE, the offset read is that of lists[c], c the
 *   smallest class whose size holds the request (found here by a linear
 *   search of hs_classes).
 * - A pagemap entry (span | class << HS_PM_CLASS_SHIFT) gives back the
 *   span, the class and the list offset, for every class and a span at the
 *   top of the 47-bit space.
 * - malloc of one size per class: the object's entry names a span that
 *   covers it, of that class, with that list offset; free pushes it on
 *   that list of the calling thread's cache (head, length + 1) and the
 *   next malloc of the size pops it back (length - 1).  A large block's
 *   entry carries offset 0 (free's slow path).
 * - realloc and malloc_usable_size, which read the class from the entry
 *   (not the span): a block's usable size is its class's size, a realloc
 *   within the class keeps the block, one to the next class moves it
 *   with its bytes (from 64 KiB, into whole pages of the sampled region,
 *   where later growth is in place); a large block's interior has usable
 *   size 0.
 * Linked with libheapscope.a, sampling off (a sample is never in the
 * pagemap).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/pagemap.h"
#include "core/size_class.h"
#include "core/thread_cache.h"
#include "sampling.h"

static hs_tcache_t *my_cache(void)
{
	return *(hs_tcache_t *volatile *)&hs_thread.tc;
}

/* smallest class whose object holds n bytes */
static unsigned fitting_class(size_t n)
{
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		if (hs_classes[c].size >= n)
			return c;
	return 0;
}

static size_t list_offset(unsigned c)
{
	hs_tcache_t *tc = my_cache();
	return (size_t)((char *)&tc->lists[c] - (char *)tc);
}

static void test_class_table_offsets(void **state)
{
	(void)state;
	free(malloc(16)); /* init; this thread's cache is active */
	unsigned c = 1;
	for (size_t n = 0; n <= HS_MAX_SMALL_SIZE; n++) {
		while (hs_classes[c].size < n)
			c++; /* sizes grow: the search resumes */
		if (n % 4093 == 0)
			assert_int_equal(c, fitting_class(n));
		assert_int_equal(hs_class_table[hs_class_index(n)],
				 list_offset(c));
		assert_int_equal(hs_size_to_class(n), c);
	}
}

static void test_entry_encoding(void **state)
{
	(void)state;
	const uintptr_t spans[] = {0x1000, 0x7fffffffffc0};
	for (size_t i = 0; i < 2; i++) {
		for (unsigned c = 0; c < HS_NUM_CLASSES; c++) {
			uintptr_t e = spans[i] | (uintptr_t)c
							 << HS_PM_CLASS_SHIFT;
			assert_int_equal((uintptr_t)hs_pm_entry_span(e),
					 spans[i]);
			assert_int_equal(hs_pm_entry_class(e), c);
			assert_int_equal(hs_pm_entry_list_offset(e),
					 c ? list_offset(c) : 0);
		}
	}
}

static void test_malloc_free_lists(void **state)
{
	(void)state;
	free(malloc(16));
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		/* the class's largest and smallest sizes */
		size_t sizes[2] = {hs_classes[c].size,
				   hs_classes[c - 1].size + 1};
		for (int k = 0; k < 2; k++) {
			size_t n = sizes[k];
			char *p = malloc(n);
			assert_non_null(p);
			uintptr_t page = (uintptr_t)p >> HS_PAGE_SHIFT;
			uintptr_t e = hs_pagemap_entry(page);
			hs_span_t *s = hs_pm_entry_span(e);
			assert_non_null(s);
			assert_true(s->start <= page &&
				    page < s->start + s->npages);
			assert_int_equal(s->size_class, c);
			assert_int_equal(hs_pm_entry_class(e), c);
			assert_int_equal(hs_pm_entry_list_offset(e),
					 list_offset(c));
			hs_tc_list_t *l = &my_cache()->lists[c];
			uint32_t len = l->length;
			if (len >= l->max_length) {
				free(p); /* no room: an overflow */
				continue;
			}
			free(p);
			assert_ptr_equal(l->head, p);
			assert_int_equal(l->length, len + 1);
			assert_ptr_equal(malloc(n), p);
			assert_int_equal(l->length, len);
			free(p);
		}
	}
	char *big = malloc(HS_MAX_SMALL_SIZE + 1);
	assert_non_null(big);
	uintptr_t e = hs_pagemap_entry((uintptr_t)big >> HS_PAGE_SHIFT);
	assert_int_equal(hs_pm_entry_list_offset(e), 0);
	free(big);
}

static void test_realloc_usable_size(void **state)
{
	(void)state;
	for (unsigned c = 1; c + 1 < HS_NUM_CLASSES; c++) {
		size_t size = hs_classes[c].size;
		unsigned char *p = malloc(size);
		assert_non_null(p);
		assert_int_equal(malloc_usable_size(p), size);
		memset(p, (int)c, size);
		assert_ptr_equal(realloc(p, hs_classes[c - 1].size + 1), p);
		/* class c + 1; from HS_REGION_GROW_MIN, whole pages of the
		 * sampled region (sampling.h hs_region_alloc_growable) */
		unsigned char *q = realloc(p, size + 1);
		size_t want = hs_classes[c + 1].size;
		if (size + 1 >= HS_REGION_GROW_MIN)
			want = (size + HS_PAGE_SIZE) & ~(HS_PAGE_SIZE - 1);
		assert_non_null(q);
		assert_true(q != p);
		assert_int_equal(malloc_usable_size(q), want);
		for (size_t i = 0; i < size; i++)
			if (q[i] != (unsigned char)c)
				fail_msg("class %u: byte %zu lost", c, i);
		free(q);
	}
	char *big = malloc(HS_MAX_SMALL_SIZE + 1);
	assert_non_null(big);
	assert_true(malloc_usable_size(big) > HS_MAX_SMALL_SIZE);
	assert_int_equal(malloc_usable_size(big + HS_PAGE_SIZE), 0);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_table_offsets),
		cmocka_unit_test(test_entry_encoding),
		cmocka_unit_test(test_malloc_free_lists),
		cmocka_unit_test(test_realloc_usable_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
