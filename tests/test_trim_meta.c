/* SPDX-License-Identifier: MIT */
/*
 * tests/test_trim_meta.c - what malloc_trim(0) leaves resident of the
 * allocator's own memory (issue 3: memory_return after the trim), checked
 * page by page with mincore.  Linked with libheapscope.a.
 *
 * A 32 MiB heap of small objects is built, freed and trimmed by one
 * thread, then:
 *  - no page of the pagemap root that holds only empty slots is resident
 *    (trim read all 4096 slots of the three-level map's root: 32 KiB),
 *    but for those of the sampled region's slots, which free reads;
 *  - no page wholly inside the lists of a shard the thread never used is
 *    resident (trim locked every class of every shard: 24 KiB);
 *  - no page of a transfer cache's slot array is resident (2 KiB per
 *    class the thread used, ~40 KiB).
 * Nothing else runs before: the checkers (hs_central_is_valid) would
 * write every list themselves.
 */
#include <malloc.h>
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

#include "core/central_freelist.h"
#include "core/pagemap.h"
#include "sampling.h"

#define MIB ((size_t)1 << 20)
#define PG ((uintptr_t)4096)

/* resident 4 KiB pages wholly inside [p, p + len) */
static size_t resident_inside(const void *p, size_t len, uintptr_t *first)
{
	uintptr_t lo = ((uintptr_t)p + PG - 1) & ~(PG - 1);
	uintptr_t hi = ((uintptr_t)p + len) & ~(PG - 1);
	unsigned char vec[256];
	size_t n = 0;

	*first = 0;
	for (uintptr_t a = lo; a < hi; a += sizeof(vec) * PG) {
		size_t np = (hi - a) / PG;
		if (np > sizeof(vec))
			np = sizeof(vec);
		assert_int_equal(mincore((void *)a, np * PG, vec), 0);
		for (size_t i = 0; i < np; i++)
			if (vec[i] & 1) {
				if (!n)
					*first = a + i * PG;
				n++;
			}
	}
	return n;
}

/* all of [p, p + len) with p page aligned: does it hold a nonzero word? */
static int any_nonzero(uintptr_t p, size_t len)
{
	const uintptr_t *w = (const uintptr_t *)p;
	for (size_t i = 0; i < len / sizeof(*w); i++)
		if (w[i])
			return 1;
	return 0;
}

static void test_trim_leaves_no_empty_metadata(void **state)
{
	(void)state;
	size_t cap = 32 * MIB / 64, n = 0, bytes = 0;
	void **objs = mmap(NULL, cap * sizeof(void *), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(objs != MAP_FAILED);
	uint64_t s = 88172645463325252ull;
	while (bytes < 32 * MIB && n < cap) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		size_t sz = 16 + s % 241;
		objs[n] = malloc(sz);
		assert_non_null(objs[n]);
		memset(objs[n], 1, sz);
		bytes += sz;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		free(objs[i]);
	munmap(objs, cap * sizeof(void *));
	malloc_trim(0);

	/* the root: resident pages must hold a used slot */
	hs_pm_node_t *root = hs_pm_root(hs_pm_base);
	uintptr_t first, lo = (uintptr_t)root; /* 4 KiB aligned */
	size_t rlen = sizeof(hs_pm_node_t) << HS_PM_ROOT_BITS;
	assert_int_equal(hs_pm_nroot, (uintptr_t)1 << HS_PM_ROOT_BITS);
	size_t empty = 0;
	/* the root slots of the sampled region (its pages are never in the
	 * pagemap): free of a sample reads them, by design, so the pages
	 * that hold them are not trim's doing */
	uintptr_t reg_lo = 0, reg_hi = 0;
	if (hs_sampled_size) {
		reg_lo = (uintptr_t)&root[(uintptr_t)hs_sampled_start >>
					  (HS_PAGE_SHIFT + HS_PM_LEAF_BITS)];
		reg_hi = (uintptr_t)&root[((uintptr_t)hs_sampled_start +
					   hs_sampled_size - 1) >>
					  (HS_PAGE_SHIFT + HS_PM_LEAF_BITS)] +
			 sizeof(hs_pm_node_t);
	}
	for (uintptr_t a = lo; a + PG <= lo + rlen; a += PG)
		if (resident_inside((void *)a, PG, &first) &&
		    !any_nonzero(a, PG) && (a + PG <= reg_lo || a >= reg_hi))
			empty++;
	printf("pagemap root: %zu resident pages of empty slots\n", empty);

	/* the lists of the shards this thread did not use */
	unsigned used = 0;
	size_t slot_bytes;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		if (hs_central_tc_slots(0, c, &slot_bytes))
			used++;
	assert_true(used > 0); /* shard 0: the first thread's */
	size_t shard_pages = 0;
	for (unsigned sh = 1; sh < HS_CENTRAL_MAX_SHARDS; sh++) {
		size_t len;
		const void *m = hs_central_shard_mem(sh, &len);
		size_t r = resident_inside(m, len, &first);
		if (r)
			printf("shard %u: %zu pages resident (first %#lx)\n",
			       sh, r, (unsigned long)first);
		shard_pages += r;
	}

	/* the transfer caches' slot arrays */
	size_t slot_pages = 0;
	for (unsigned sh = 0; sh < HS_CENTRAL_MAX_SHARDS; sh++)
		for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
			void *p = hs_central_tc_slots(sh, c, &slot_bytes);
			if (!p)
				continue;
			uintptr_t a = (uintptr_t)p & ~(PG - 1);
			uintptr_t e = ((uintptr_t)p + slot_bytes + PG - 1) &
				      ~(PG - 1);
			slot_pages += resident_inside((void *)a, e - a, &first);
		}
	printf("%u transfer caches, %zu resident pages of slots\n", used,
	       slot_pages);
	assert_int_equal(empty, 0);
	assert_int_equal(shard_pages, 0);
	assert_int_equal(slot_pages, 0);

	/* and the heap works on: batches go to the caches again */
	for (int k = 0; k < 2; k++) {
		void *p[512];
		for (int i = 0; i < 512; i++)
			assert_non_null(p[i] = malloc(48));
		for (int i = 0; i < 512; i++)
			free(p[i]);
		malloc_trim(0);
	}
	assert_true(hs_central_is_valid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trim_leaves_no_empty_metadata),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
