// SPDX-License-Identifier: MIT
/*
 * tests/test_unwind_cache_pages.c - where the unwind cache puts a return
 * address (allocator/sampling/unwind_internal.h hs_unwind_set_at): every
 * address of one 4 KiB page of code on one 4 KiB page of the cache, at
 * places spread over that page's sets; many pages of code spread over
 * all the cache's pages; and how many pages that is: one to start with,
 * doubled only as entries get evicted.  The hash is fixed, so are the
 * figures: the bounds are those of a uniform hash (binomial), far from
 * what it gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sampling/hs_unwind.h"
#include "sampling/unwind_internal.h"

static size_t index_of(uintptr_t ip)
{
	return (size_t)(hs_unwind_set_at(ip, hs_unwind_cache_mask) -
			hs_unwind_cache);
}

static unsigned page_of(uintptr_t ip)
{
	uintptr_t a = (uintptr_t)hs_unwind_set_at(ip, hs_unwind_cache_mask);
	return (unsigned)((a - (uintptr_t)hs_unwind_cache) / 4096);
}

/* Every set is a pair of entries at an even index, inside the cache. */
static void test_sets_in_bounds(void **state)
{
	(void)state;
	hs_unwind_cache_mask = CACHE_PAGES - 1;
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
	hs_unwind_cache_mask = CACHE_PAGES - 1;
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
 * cache pages gets 1,024 on average (a cache grown to all 32 pages); a uniform
 * hash stays within
 * +-6 standard deviations (sqrt(32768 / 32 * 31 / 32) ~ 31.5). */
static void test_many_code_pages(void **state)
{
	(void)state;
	hs_unwind_cache_mask = CACHE_PAGES - 1;
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

/* A cache of 2^log pages puts every address on one of its first 2^log
 * pages, a page of code on one page; growing by one step sends a page
 * of code from page p to p or p + 2^log. */
static void test_pages_in_use(void **state)
{
	(void)state;
	for (unsigned log = 0; log <= CACHE_PAGES_BITS; log++) {
		uint32_t mask = (1u << log) - 1;
		for (uintptr_t p = 0; p < 4096; p++) {
			uintptr_t ip = 0x7f0000000000 + (p << 12) + 0x40;
			hs_unwind_cache_mask = mask;
			unsigned page = page_of(ip);
			assert_true(page <= mask);
			assert_int_equal(page, page_of(ip + 0xf80));
			if (log) {
				hs_unwind_cache_mask = mask >> 1;
				assert_int_equal(page & (mask >> 1),
						 page_of(ip));
			}
		}
	}
}

/* Puts n return addresses, four per page of code (a few dozen bytes
 * apart, as calls in one function are) from text_page on, each with its
 * own rule, and counts how many a get finds afterwards. */
static unsigned put_and_count(uintptr_t text_page, unsigned n, unsigned rounds)
{
	struct rule r = {
		.cfa_off = 16, .ra_off = -8, .rbp_off = 0, .flags = RULE_STEP};
	unsigned found = 0;

	for (unsigned k = 0; k < rounds; k++)
		for (unsigned i = 0; i < n; i++) {
			uintptr_t ip = ((text_page + i / 4) << 12) + 0x40 +
				       (i % 4) * 0x38;
			r.cfa_off = (int32_t)(16 + i);
			hs_unwind_cache_put(ip, 0x1001, &r);
		}
	for (unsigned i = 0; i < n; i++) {
		uintptr_t ip =
			((text_page + i / 4) << 12) + 0x40 + (i % 4) * 0x38;
		struct rule got;
		if (hs_unwind_cache_get(ip, 0x1001, hs_unwind_cache_mask,
					&got)) {
			assert_int_equal(got.cfa_off, 16 + i);
			found++;
		}
	}
	return found;
}

/* The cache starts on one page and grows only as entries get evicted:
 * 40 return addresses on one page of 64 sets of two: with this hash no
 * three of them share a set, so none is evicted however often they are
 * put, and all 40 are found.  3,000 do not fit 1,024 entries (each round
 * evicts at least 3,000 - 1,024 of them), so the cache grows to 2,048
 * entries or more and keeps most of them; after hs_unwind_trim it is one
 * page again.  hs_unwind_cache_bytes (the statistics block's figure)
 * follows. */
static void test_grows_with_evictions(void **state)
{
	(void)state;
	hs_unwind_trim();
	assert_int_equal(hs_unwind_cache_mask, 0);
	unsigned found = put_and_count(0x7f1234500, 40, 20);
	print_message("40 addresses: %u found, cache of %u pages\n", found,
		      hs_unwind_cache_mask + 1);
	assert_int_equal(hs_unwind_cache_mask, 0);
	assert_true(found >= 36);

	found = put_and_count(0x55d0c0000, 3000, 8);
	print_message("3000 addresses: %u found, cache of %u pages\n", found,
		      hs_unwind_cache_mask + 1);
	assert_true(hs_unwind_cache_mask + 1 >= 16);
	assert_int_equal(hs_unwind_cache_bytes(),
			 (hs_unwind_cache_mask + 1) * 4096);
	assert_true(found >= 3000 / 2);

	hs_unwind_trim();
	assert_int_equal(hs_unwind_cache_mask, 0);
	assert_int_equal(hs_unwind_cache_bytes(), 4096);
	assert_int_equal(put_and_count(0x55d0c0000, 3000, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sets_in_bounds),
		cmocka_unit_test(test_one_code_page),
		cmocka_unit_test(test_many_code_pages),
		cmocka_unit_test(test_pages_in_use),
		cmocka_unit_test(test_grows_with_evictions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
