/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pagemap_commit.c - the pagemap's root and empty leaf are a
 * read-only mapping with only the root pages that name a leaf writable
 * (core/pagemap.h), so strict overcommit charges a process for those
 * pages, not for 4.3 MiB.  Linked with libheapscope.a.
 *
 * Checked against /proc/self/maps: the writable 4 KiB pages inside the
 * mapping are exactly the root pages holding a non-zero slot, read from
 * the root itself; the empty leaf is never writable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/pagemap.h"
#include "sampling.h"

#define PG 4096UL
#define MAP_BYTES                                                              \
	(HS_PM_ROOT_OFFSET + (sizeof(hs_pm_node_t) << HS_PM_ROOT_BITS))

/* Bytes of [lo, hi) that /proc/self/maps says are writable; with the
 * writable pages' indices (from lo) set in w[]. */
static size_t writable_in(uintptr_t lo, uintptr_t hi, unsigned char *w)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[512];
	size_t n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3)
			continue;
		if (b <= lo || a >= hi || perm[1] != 'w')
			continue;
		if (a < lo)
			a = lo;
		if (b > hi)
			b = hi;
		for (uintptr_t p = a; p < b; p += PG)
			w[(p - lo) / PG] = 1;
		n += b - a;
	}
	fclose(f);
	return n;
}

static void test_root_pages_writable_only_where_used(void **state)
{
	(void)state;
	/* leaves for small spans, a large block and a second distant leaf
	 * (a 768 MiB block spans at least 3 leaves of 256 MiB) */
	void *small[64];
	for (int i = 0; i < 64; i++)
		assert_non_null(small[i] = malloc(16 + 48 * (size_t)i));
	void *big = malloc((size_t)768 << 20);
	assert_non_null(big);

	uintptr_t base = (uintptr_t)hs_pm_base;
	assert_non_null(hs_pm_base);
	assert_int_equal(base % PG, 0);
	static unsigned char w[MAP_BYTES / PG];
	memset(w, 0, sizeof(w));
	size_t wbytes = writable_in(base, base + MAP_BYTES, w);

	/* the empty leaf: never writable */
	for (size_t pg = 0; pg < HS_PM_ROOT_OFFSET / PG; pg++)
		assert_int_equal(w[pg], 0);
	/* the root: a page is writable iff it holds a leaf */
	const hs_pm_node_t *root = hs_pm_root(hs_pm_base);
	const size_t per_pg = PG / sizeof(hs_pm_node_t);
	size_t used_pages = 0, leaves = 0;
	for (size_t rp = 0; rp < ((size_t)1 << HS_PM_ROOT_BITS) / per_pg;
	     rp++) {
		int used = 0;
		for (size_t j = rp * per_pg; j < (rp + 1) * per_pg; j++)
			if (root[j]) {
				used = 1;
				leaves++;
			}
		used_pages += (size_t)used;
		assert_int_equal(w[HS_PM_ROOT_OFFSET / PG + rp], used);
	}
	printf("pagemap: %zu leaves, %zu of %zu root pages writable "
	       "(%zu bytes of %zu)\n",
	       leaves, used_pages, ((size_t)1 << HS_PM_ROOT_BITS) / per_pg,
	       wbytes, (size_t)MAP_BYTES);
	assert_int_equal(wbytes, used_pages * PG);
	/* the lookups still find what was allocated: a large span maps its
	 * first and last pages; a sample (the default period samples the
	 * block) is in the sampled region, never in the pagemap */
	if (hs_is_sampled(big)) {
		assert_true(leaves >= 1);
		assert_null(hs_pagemap_lookup(big));
	} else {
		assert_true(leaves >= 4); /* the small spans' and the block's */
		assert_non_null(hs_pagemap_lookup(big));
		assert_non_null(hs_pagemap_lookup((char *)big +
						  ((size_t)768 << 20) - 1));
	}
	free(big);
	for (int i = 0; i < 64; i++) {
		/* a sampled one is in the sampled region, as above */
		if (hs_is_sampled(small[i]))
			assert_null(hs_pagemap_lookup(small[i]));
		else
			assert_non_null(hs_pagemap_lookup(small[i]));
		free(small[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_pages_writable_only_where_used),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
