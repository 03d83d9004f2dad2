// SPDX-License-Identifier: MIT
/*
 * tests/test_sampled_huge.c - samples as big as the page heap's own
 * huge-page mappings (over 64 MiB and over HEAPSCOPE_REGION_BLOCK_MAX)
 * get transparent huge pages in the sampled region, as the unsampled
 * block of their size gets them in the page heap (region/pages.c
 * hs_pages_set_huge): 2 MiB aligned, whole huge pages, MADV_HUGEPAGE
 * while they live and the region's MADV_NOHUGEPAGE back when freed.
 * Read from /proc/self/smaps (VmFlags "hg" / "nh"), through the real
 * library (linked).  Run with HEAPSCOPE_SAMPLE_RATE=1: every
 * allocation is sampled, under two settings of HEAPSCOPE_HUGEPAGE_AFTER:
 * 0 (huge pages on: the above) and -1 (never, the default: the sample
 * stays on the region's 4 KiB pages, MADV_NOHUGEPAGE, cut to 4 KiB, the
 * region's mappings unsplit).
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sampled_util.h"

#define MIB ((size_t)1 << 20)
#define HUGE (2 * MIB)

/* The mapping of /proc/self/smaps that holds addr: its bounds and
 * whether VmFlags has "hg" / "nh".  Asserted to exist. */
struct vma {
	uintptr_t start, end;
	int hg, nh;
};

static struct vma vma_of(const void *addr)
{
	char line[512];
	struct vma v = {0};
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= s && (uintptr_t)addr < e;
			if (in) {
				v.start = s;
				v.end = e;
				found = 1;
			}
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			v.hg = strstr(line, " hg") != NULL;
			v.nh = strstr(line, " nh") != NULL;
		}
	}
	fclose(f);
	assert_true(found);
	return v;
}

/* Mappings of /proc/self/maps that overlap the sampled region. */
static int region_vmas(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t lo = REG->region_start, hi = lo + REG->region_size;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && s < hi && e > lo)
			n++;
	}
	fclose(f);
	return n;
}

static int have_thp(void)
{
	return access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
}

/* HEAPSCOPE_HUGEPAGE_AFTER (set by ctest) is not negative: huge pages
 * on.  Unset it is the default, -1. */
static int huge_on(void)
{
	const char *v = getenv("HEAPSCOPE_HUGEPAGE_AFTER");

	return v && atoll(v) >= 0;
}

/* A 100 MiB + 4 KiB sample, huge pages on: 2 MiB aligned, on 51 whole
 * huge pages (the page heap maps it rounded to 2 MiB the same way),
 * advised "hg" as one mapping; off: 4 KiB pages, the region's "nh", no
 * mapping of its own.  Its allocated size and weight are those of any
 * sample. */
static void test_huge_sample(void **state)
{
	size_t n = 100 * MIB + 4096;
	int before = region_vmas();
	const struct heapscope_record *rec;
	struct vma v;
	unsigned char *p;

	(void)state;
	if (!have_thp())
		skip();
	p = malloc(n);
	assert_non_null(p);
	assert_true(in_region(p));
	rec = find_record(p);
	assert_non_null(rec);
	assert_int_equal(rec->requested, n);
	assert_int_equal(malloc_usable_size(p), rec->allocated);
	assert_true(rec->allocated >= n && rec->allocated < n + HUGE);
	/* period 1: W = r + 1 (sampler.h) */
	assert_int_equal(rec->weight, n + 1);
	v = vma_of(p);
	if (huge_on()) {
		assert_int_equal((uintptr_t)p % HUGE, 0);
		assert_int_equal(rec->span_bytes, 102 * MIB);
		assert_int_equal(v.start, (uintptr_t)p);
		assert_int_equal(v.end, (uintptr_t)p + 102 * MIB);
		assert_true(v.hg);
		assert_false(v.nh);
	} else {
		/* the allocated size (what the page heap would give,
		 * rounded to its own step), on 4 KiB pages */
		assert_int_equal(rec->span_bytes,
				 (rec->allocated + 4095) & ~(size_t)4095);
		assert_true(v.nh);
		assert_false(v.hg);
		assert_int_equal(region_vmas(), before);
	}
	memset(p, 1, n);
	free(p);
	/* the region's flag again, and its mappings merged back */
	v = vma_of(p);
	assert_true(v.nh);
	assert_false(v.hg);
	assert_int_equal(region_vmas(), before);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* 64 MiB is not over the page heap's limit: its own pages, no advice,
 * the region's mappings unsplit. */
static void test_boundary(void **state)
{
	int before = region_vmas();
	struct vma v;
	void *p;

	(void)state;
	if (!have_thp())
		skip();
	p = malloc(64 * MIB);
	assert_non_null(p);
	assert_non_null(find_record(p));
	assert_int_equal(find_record(p)->span_bytes, 64 * MIB);
	v = vma_of(p);
	assert_true(v.nh);
	assert_false(v.hg);
	assert_int_equal(region_vmas(), before);
	free(p);
	assert_int_equal(heapscope_sampled_check(), 0);
}

/* realloc of a huge sample: the new sample (in place or moved) is
 * advised over all of its pages when huge pages are on, not at all when
 * off; contents kept; freeing it leaves no advice behind. */
static void test_huge_realloc(void **state)
{
	int before = region_vmas();
	const struct heapscope_record *rec;
	unsigned char *p, *q;
	struct vma v;

	(void)state;
	if (!have_thp())
		skip();
	p = malloc(80 * MIB);
	assert_non_null(p);
	memset(p, 7, 80 * MIB);
	q = realloc(p, 90 * MIB + 1);
	assert_non_null(q);
	rec = find_record(q);
	assert_non_null(rec);
	assert_int_equal(rec->requested, 90 * MIB + 1);
	v = vma_of(q);
	if (huge_on()) {
		assert_int_equal((uintptr_t)q % HUGE, 0);
		assert_int_equal(v.start, (uintptr_t)q);
		assert_true(v.end >= (uintptr_t)q + 92 * MIB);
		assert_true(v.hg);
	} else {
		assert_false(v.hg);
		assert_true(v.nh);
		assert_int_equal(region_vmas(), before);
	}
	assert_int_equal(q[0], 7);
	assert_int_equal(q[80 * MIB - 1], 7);
	free(q);
	assert_int_equal(region_vmas(), before);
	assert_int_equal(heapscope_sampled_check(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huge_sample),
		cmocka_unit_test(test_boundary),
		cmocka_unit_test(test_huge_realloc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
