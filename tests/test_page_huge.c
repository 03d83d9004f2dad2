// SPDX-License-Identifier: MIT
/*
 * Transparent huge pages in the page heap (allocator/core/page_huge.c), on
 * the static library with sampling off and large blocks in the page heap
 * (set by ctest), under two settings of HEAPSCOPE_HUGEPAGE_AFTER:
 * - 0: the heap's chunk is advised MADV_HUGEPAGE (its mapping shows "hg"
 *   in /proc/self/smaps' VmFlags);
 * - -1 (never): it is not.
 * A request over a chunk gets a mapping of its own, advised under 0 and
 * not under -1.
 * Under both, a released span gives back every one of its pages, also
 * those that shared a huge page with spans still in use (the huge page
 * is split), and nothing else: residency read with mincore() page by
 * page, compared with what the spans' addresses say.  On a kernel
 * without THP (madvise() refuses MADV_HUGEPAGE) the heap cannot be
 * advised: the test expects -1's advice then.
 */
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

#include "base/options.h"
#include "core/page_heap.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define HUGE (2 * MIB)
#define PAGES(bytes) ((bytes) >> HS_PAGE_SHIFT)

/* The kernel takes MADV_HUGEPAGE (CONFIG_TRANSPARENT_HUGEPAGE). */
static int kernel_has_thp(void)
{
	void *p = mmap(NULL, HUGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	int ok = madvise(p, HUGE, MADV_HUGEPAGE) == 0;
	munmap(p, HUGE);
	return ok;
}

/* The VmFlags of the mapping holding address a include "hg". */
static int advised_hugepage(uintptr_t a)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	int in = 0, hg = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		/* a mapping's first line: "lo-hi perms ..."; the others
		 * are "Key: value" */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	assert_int_not_equal(hg, -1); /* the mapping was found */
	return hg;
}

/* A span of `bytes`, every page written (resident). */
static hs_span_t *span_touched(size_t bytes)
{
	hs_span_t *s = hs_page_heap_alloc(PAGES(bytes), 1);
	assert_non_null(s);
	memset(hs_span_addr(s), 0x5a, hs_span_bytes(s));
	return s;
}

static uintptr_t addr(const hs_span_t *s)
{
	return (uintptr_t)hs_span_addr(s);
}

/* Every 4 KiB page of [lo, hi) is resident exactly when it lies outside
 * the released run [glo, ghi). */
static void check_residency(uintptr_t lo, uintptr_t hi, uintptr_t glo,
			    uintptr_t ghi)
{
	size_t n = (hi - lo) / 4096;
	unsigned char *vec = malloc(n);
	assert_non_null(vec);
	assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
	size_t wrong = 0, gone = 0;
	for (size_t i = 0; i < n; i++) {
		uintptr_t p = lo + i * 4096;
		int expect = !(p >= glo && p < ghi);
		gone += !expect;
		wrong += (vec[i] & 1) != expect;
	}
	free(vec);
	if (wrong)
		print_message("%zu of %zu pages wrong (%zu expected gone)\n",
			      wrong, n, gone);
	assert_int_equal(wrong, 0);
}

static void test_advice_and_exact_release(void **state)
{
	(void)state;
	int64_t after = hs_option_get(HS_OPT_HUGEPAGE_AFTER);
	int advised = after == 0 && kernel_has_thp();
	hs_page_heap_release(SIZE_MAX);

	/* g0 | p | a | n: the guards g0 and n stay in use, p and a are
	 * freed and released; sizes that put their edges inside huge
	 * pages */
	hs_span_t *g0 = span_touched(1 * MIB);
	hs_span_t *p = span_touched(1 * MIB + 512 * KIB);
	hs_span_t *a = span_touched(5 * MIB);
	hs_span_t *n = span_touched(1 * MIB);
	/* the premise: cut front to back from one chunk */
	assert_int_equal(g0->start + g0->npages, p->start);
	assert_int_equal(p->start + p->npages, a->start);
	assert_int_equal(a->start + a->npages, n->start);
	uintptr_t lo = addr(g0), hi = addr(n) + hs_span_bytes(n);
	uintptr_t p_lo = addr(p), a_lo = addr(a), a_hi = addr(n);
	assert_int_equal(advised_hugepage(a_lo), advised);
	/* the premise of what follows: a shares huge pages with p and n */
	assert_true(a_lo % HUGE != 0 && a_hi % HUGE != 0);

	/* a alone: exactly its pages go back */
	hs_page_heap_free(a);
	hs_page_heap_release(SIZE_MAX);
	check_residency(lo, hi, a_lo, a_hi);

	/* then p, which merges with the released a */
	hs_page_heap_free(p);
	hs_page_heap_release(SIZE_MAX);
	check_residency(lo, hi, p_lo, a_hi);
	assert_int_equal(hs_page_heap_is_valid(), 1);
	hs_page_heap_free(g0);
	hs_page_heap_free(n);
	assert_int_equal(hs_page_heap_is_valid(), 1);
}

/* A request over a chunk (64 MiB) gets a mapping of its own, 2 MiB
 * aligned, advised exactly when the standard chunks may be (the option
 * not negative); with -1 it stays on 4 KiB pages. */
static void test_own_mapping(void **state)
{
	(void)state;
	int64_t after = hs_option_get(HS_OPT_HUGEPAGE_AFTER);
	int advised = after >= 0 && kernel_has_thp();
	hs_span_t *s = hs_page_heap_alloc(PAGES(80 * MIB), 1);
	assert_non_null(s);
	assert_int_equal(addr(s) % HUGE, 0);
	assert_int_equal(advised_hugepage(addr(s)), advised);
	assert_int_equal(advised_hugepage(addr(s) + 80 * MIB - 1), advised);
	hs_page_heap_free(s);
	assert_int_equal(hs_page_heap_is_valid(), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_advice_and_exact_release),
		cmocka_unit_test(test_own_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
