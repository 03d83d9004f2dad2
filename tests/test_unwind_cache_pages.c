// SPDX-License-Identifier: MIT
/*
 * tests/test_unwind_cache_pages.c - where the unwind cache puts a return
 * address (allocator/sampling/unwind_internal.h hs_unwind_set_of): every
 * address of one 4 KiB page of code on one 4 KiB page of the cache, at
 * places spread over that page's sets; and many pages of code spread over
 * all the cache's pages.  The hash is fixed, so are the figures: the
 * bounds are those of a uniform hash (binomial), far from what it gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sampling/unwind_internal.h"

#define CACHE_PAGES ((1u << CACHE_BITS) / (2 * CACHE_PAGE_SETS))

static size_t index_of(uintptr_t ip)
{
	return (size_t)(hs_unwind_set_of(ip) - hs_unwind_cache);
}

static unsigned page_of(uintptr_t ip)
{
	uintptr_t a = (uintptr_t)hs_unwind_set_of(ip);
	return (unsigned)((a - (uintptr_t)hs_unwind_cache) / 4096);
}

/* Every set is a pair of entries at an even index, inside the cache. */
static void test_sets_in_bounds(void **state)
{
	(void)state;
	for (uintptr_t ip = 0x400000; ip < 0x400000 + (1u << 20); ip += 7) {
		size_t i = index_of(ip);
		assert_true(i % 2 == 0);
		assert_true(i + 1 < (1u << CACHE_BITS));
	}
}

/* One page of code: one page of the cache; its 256 return addresses at
 * 16-byte steps use at least 56 of that page's 64 sets (the Fibonacci
 * hash gives 58-59 here; a uniform one would leave 64 * (1 - 1/64)^256
 * ~ 1.2 empty on average, one that kept the low bits of ip, 16 or
 * fewer). */
static void test_one_code_page(void **state)
{
	(void)state;
	const uintptr_t bases[] = { 0x401000, 0x7f12345a7000, 0x55d0c0de3000 };
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		unsigned char used[CACHE_PAGE_SETS];
		unsigned page = page_of(bases[b]), distinct = 0;
		memset(used, 0, sizeof(used));
		for (uintptr_t off = 0; off < 4096; off += 16) {
			uintptr_t ip = bases[b] + off;
			assert_int_equal(page_of(ip), page);
			size_t set = index_of(ip) / 2 % CACHE_PAGE_SETS;
			distinct += !used[set];
			used[set] = 1;
		}
		print_message("code page %#lx: cache page %u, %u of %u sets\n",
			      (unsigned long)bases[b], page, distinct,
			      CACHE_PAGE_SETS);
		assert_true(distinct >= 56);
	}
}

/* 32,768 consecutive pages of code (a 128 MiB text): each of the 32
 * cache pages gets 1,024 on average; a uniform hash stays within
 * +-6 standard deviations (sqrt(32768 / 32 * 31 / 32) ~ 31.5). */
static void test_many_code_pages(void **state)
{
	(void)state;
	unsigned count[CACHE_PAGES];
	memset(count, 0, sizeof(count));
	for (uintptr_t p = 0; p < 32768; p++)
		count[page_of(0x7f0000000000 + (p << 12) + 0x40)]++;
	for (unsigned i = 0; i < CACHE_PAGES; i++) {
		if (count[i] < 1024 - 189 || count[i] > 1024 + 189)
			print_message("cache page %u: %u code pages\n", i,
				      count[i]);
		assert_in_range(count[i], 1024 - 189, 1024 + 189);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sets_in_bounds),
		cmocka_unit_test(test_one_code_page),
		cmocka_unit_test(test_many_code_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
