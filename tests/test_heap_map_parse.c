// SPDX-License-Identifier: MIT
/*
 * test_heap_map_parse.c - cmocka tests of the heap map reader
 * (collector/target/heap_map.c) against crafted target memory and a
 * crafted pagemap (a sparse file): the resident bytes of two large spans
 * and of the region's used runs (free runs and torn entries skipped) are
 * the present entries written here; swapped entries are counted apart;
 * every header field out of bounds, a span list that loops or is longer
 * than stated, a span beyond the address space, and more blocks than the
 * caller's budget are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "target.h"

#define BASE 0x10000000ull /* where the fake memory starts */
#define SPAN_A 0x40000000ull
#define SPAN_B 0x40100000ull
#define REGION 0x80000000ull
#define NPAGES 16
#define BUDGET (1ull << 30)

struct fake_span {
	uint64_t start, npages, next, pad;
};
struct fake_run {
	uint16_t tag, kind;
	uint32_t len, a, b;
};
struct fake_mem {
	struct heapscope_heap_map m;
	struct fake_span spans[2];
	struct fake_run runs[NPAGES];
	uint32_t frontier;
};

static struct fake_mem mem;

#define ADDR(field) (BASE + offsetof(struct fake_mem, field))

static int rd(void *ctx, uint64_t addr, void *dst, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > sizeof(mem) ||
	    len > sizeof(mem) - (addr - BASE))
		return -EFAULT;
	memcpy(dst, (char *)&mem + (addr - BASE), len);
	return 0;
}

static void make_good(void)
{
	struct heapscope_heap_map *m = &mem.m;

	memset(&mem, 0, sizeof(mem));
	m->magic = HEAPSCOPE_HEAP_MAP_MAGIC;
	m->version = HEAPSCOPE_HEAP_MAP_VERSION;
	m->size = sizeof(*m);
	m->page_shift = 13;
	m->large_head = ADDR(spans[0]);
	m->large_count = 2;
	m->span_start_offset = offsetof(struct fake_span, start);
	m->span_npages_offset = offsetof(struct fake_span, npages);
	m->span_next_offset = offsetof(struct fake_span, next);
	/* A: 4 pages (32 KiB), B: 2 pages */
	mem.spans[0] = (struct fake_span){SPAN_A >> 13, 4, ADDR(spans[1]), 0};
	mem.spans[1] = (struct fake_span){SPAN_B >> 13, 2, 0, 0};
	m->region_base = REGION;
	m->region_pages = NPAGES;
	m->run_meta = ADDR(runs);
	m->run_frontier_addr = ADDR(frontier);
	m->run_entry_size = sizeof(struct fake_run);
	m->run_tag_offset = offsetof(struct fake_run, tag);
	m->run_len_offset = offsetof(struct fake_run, len);
	m->run_tag_used = 1;
	m->run_tag_free = 2;
	/* runs: [0,3) used, [3,5) free, [5,6) used, page 6 torn (used, len
	 * beyond the frontier), [7,8) used; frontier 8 */
	mem.runs[0] = (struct fake_run){1, 0, 3, 0, 0};
	mem.runs[3] = (struct fake_run){2, 0, 2, 0, 0};
	mem.runs[5] = (struct fake_run){1, 0, 1, 0, 0};
	mem.runs[6] = (struct fake_run){1, 0, 100, 0, 0};
	mem.runs[7] = (struct fake_run){1, 0, 1, 0, 0};
	mem.frontier = 8;
}

/* A pagemap file: entries for 4 KiB pages at the given addresses. */
static void set_pm(int fd, uint64_t addr, unsigned pages, uint64_t bits)
{
	for (unsigned i = 0; i < pages; i++) {
		uint64_t e = bits;
		off_t off = (off_t)((addr / 4096 + i) * 8);

		assert_int_equal(pwrite(fd, &e, 8, off), 8);
	}
}

static int pagemap(void)
{
	char path[] = "/tmp/hs_pagemap_XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	/* span A: 5 of its 8 OS pages present, 1 swapped */
	set_pm(fd, SPAN_A, 5, 1ull << 63);
	set_pm(fd, SPAN_A + 5 * 4096, 1, 1ull << 62);
	set_pm(fd, SPAN_A + 6 * 4096, 2, 0);
	/* span B: all 4 present */
	set_pm(fd, SPAN_B, 4, 1ull << 63);
	/* region: every page present, so what counts is which runs */
	set_pm(fd, REGION, NPAGES * 2, 1ull << 63);
	/* the file must cover the highest entry read */
	return fd;
}

static void test_resident(void **state)
{
	struct heapscope_heap_map m;
	struct hs_heap_resident r;
	int fd = pagemap();

	(void)state;
	make_good();
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), 0);
	assert_int_equal(r.spans, 2);
	assert_int_equal(r.span_bytes, 6 * 8192);
	assert_int_equal(r.span_resident, (5 + 4) * 4096);
	assert_int_equal(r.swapped, 4096);
	/* used runs: 3 + 1 + 1 pages (the torn page 6 skipped) */
	assert_int_equal(r.runs, 3);
	assert_int_equal(r.run_bytes, 5 * 8192);
	assert_int_equal(r.run_resident, 5 * 8192);
	/* a frontier beyond the region is cut to it: the runs stay */
	mem.frontier = 1000;
	mem.runs[6].len = 1;
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), 0);
	assert_int_equal(r.run_bytes, 6 * 8192);
	/* more blocks than the statistics allow: refused, not walked */
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, 8 * 8192, &r),
			 -E2BIG);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, 5 * 8192, &r),
			 -E2BIG);
	/* run entries past what one walk may read: refused before reading
	 * (the fake memory would give -EFAULT) */
	m.region_pages = 1u << 26;
	mem.frontier = m.region_pages;
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r),
			 -E2BIG);
	close(fd);
}

static void test_bad_maps(void **state)
{
	struct heapscope_heap_map m;

	(void)state;
#define BAD(stmt)                                                              \
	do {                                                                   \
		make_good();                                                   \
		stmt;                                                          \
		assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m),        \
				 -EBADMSG);                                    \
	} while (0)
	BAD(mem.m.magic ^= 1);
	BAD(mem.m.version = 2);
	BAD(mem.m.size = 8);
	BAD(mem.m.page_shift = 12);
	BAD(mem.m.large_count = HS_HEAP_MAP_MAX_LARGE + 1);
	BAD(mem.m.large_count = 0); /* a head without a count */
	BAD(mem.m.large_head += 4);
	BAD(mem.m.span_next_offset = 4);
	BAD(mem.m.span_start_offset = 4096);
	BAD(mem.m.region_base += 4096);
	BAD(mem.m.region_pages = HS_HEAP_MAP_MAX_REGION_PAGES + 1);
	BAD(mem.m.region_base = HS_HEAP_MAP_MAX_ADDR - 8192);
	BAD(mem.m.run_entry_size = 4);
	BAD(mem.m.run_entry_size = 257);
	BAD(mem.m.run_tag_offset = sizeof(struct fake_run) - 1);
	BAD(mem.m.run_len_offset = sizeof(struct fake_run));
	BAD(mem.m.run_tag_free = mem.m.run_tag_used);
	BAD(mem.m.run_frontier_addr = 0);
#undef BAD
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE + 4, &m), -EBADMSG);
	assert_int_equal(hs_heap_map__read(rd, NULL, 0, &m), -EBADMSG);
}

static void test_bad_spans(void **state)
{
	struct heapscope_heap_map m;
	struct hs_heap_resident r;
	int fd = pagemap();

	(void)state;
	/* a loop: B points back to A (the count allows more) */
	make_good();
	mem.m.large_count = 10;
	mem.spans[1].next = ADDR(spans[0]);
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), -EBADMSG);
	/* longer than stated */
	make_good();
	mem.m.large_count = 1;
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), -EBADMSG);
	/* a span beyond the address space, an empty one, a huge one */
	make_good();
	mem.spans[1].start = HS_HEAP_MAP_MAX_ADDR >> 13;
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), -EBADMSG);
	make_good();
	mem.spans[1].npages = 0;
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), -EBADMSG);
	make_good();
	mem.spans[1].npages = HS_HEAP_MAP_MAX_SPAN_PAGES + 1;
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), -EBADMSG);
	/* a link outside the memory: the reader's error */
	make_good();
	mem.m.large_count = 3;
	mem.spans[1].next = 0x20000000ull;
	assert_int_equal(hs_heap_map__read(rd, NULL, BASE, &m), 0);
	assert_int_equal(hs_heap_map__resident(rd, NULL, fd, &m, BUDGET, &r), -EFAULT);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resident),
		cmocka_unit_test(test_bad_maps),
		cmocka_unit_test(test_bad_spans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
