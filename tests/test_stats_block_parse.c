// SPDX-License-Identifier: MIT
/*
 * test_stats_block_parse.c - cmocka tests of the statistics block reader
 * (collector/target/stats_block.c) against crafted and hostile blocks
 * held in a buffer: a good block with three thread caches (their bytes
 * summed independently here), every header field out of bounds, counters
 * beyond 2^50, thread-cache lists that loop, run longer than stated, hold
 * impossible counts or point to unreadable memory, a writer that never
 * lets two copies agree (bounded retries), and random garbage behind a
 * valid magic.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "target.h"

#define BASE 0x20000ull /* fake target address of the buffer */
#define NCLASS 8
#define NCACHE 3

/* A cache of the fake target's own layout: what the block describes. */
struct fake_list {
	uint64_t head;
	uint32_t length;
	uint32_t max_length;
};
struct fake_cache {
	struct fake_list lists[NCLASS];
	uint64_t pad;
	uint64_t next;
};

struct fake_mem {
	struct heapscope_stats_block b;
	struct fake_cache caches[NCACHE];
	int bump; /* each read changes a counter (busy writer) */
	int reads;
};

static uint64_t cache_addr(int i)
{
	return BASE + offsetof(struct fake_mem, caches) +
	       (uint64_t)i * sizeof(struct fake_cache);
}

static int mem_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
	struct fake_mem *m = ctx;
	size_t size = offsetof(struct fake_mem, bump);

	m->reads++;
	if (addr < BASE || addr - BASE > size || len > size - (addr - BASE))
		return -EFAULT;
	memcpy(dst, (uint8_t *)m + (addr - BASE), len);
	if (m->bump)
		m->b.values[HEAPSCOPE_STAT_SAMPLES_TOTAL]++;
	return 0;
}

static const uint32_t sizes[NCLASS] = {0, 16, 32, 48, 64, 80, 96, 112};

static void make_good(struct fake_mem *m)
{
	memset(m, 0, sizeof(*m));
	m->b.magic = HEAPSCOPE_STATS_MAGIC;
	m->b.version = HEAPSCOPE_STATS_VERSION;
	m->b.header_size = sizeof(m->b);
	m->b.value_count = HEAPSCOPE_STAT_V1_COUNT;
	m->b.class_count = NCLASS;
	memcpy(m->b.class_size, sizes, sizeof(sizes));
	m->b.values[HEAPSCOPE_STAT_SMALL_SPAN_BYTES] = 1 << 20;
	m->b.values[HEAPSCOPE_STAT_CENTRAL_FREE_BYTES] = 4096;
	m->b.values[HEAPSCOPE_STAT_META_BYTES] = -5; /* transient: 0 */
	m->b.unwind_cache_bytes = 131072;
	m->b.tcache_head = cache_addr(0);
	m->b.tcache_count = NCACHE;
	m->b.tcache_next_offset = offsetof(struct fake_cache, next);
	m->b.tcache_lists_offset = offsetof(struct fake_cache, lists);
	m->b.tcache_list_size = sizeof(struct fake_list);
	m->b.tcache_length_offset = offsetof(struct fake_list, length);
	for (int i = 0; i < NCACHE; i++) {
		m->caches[i].next = i + 1 < NCACHE ? cache_addr(i + 1) : 0;
		for (int c = 1; c < NCLASS; c++)
			m->caches[i].lists[c].length = (uint32_t)(i + c);
	}
}

/* Bytes the good block's caches hold: sum over caches i and classes c of
 * (i + c) objects of sizes[c]. */
static uint64_t good_tcache_bytes(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < NCACHE; i++)
		for (int c = 1; c < NCLASS; c++)
			sum += (uint64_t)(i + c) * sizes[c];
	return sum;
}

static int parse(struct fake_mem *m, struct hs_stats_snapshot *s)
{
	return hs_stats_block__read(mem_read, m, BASE, s);
}

static void test_good(void **state)
{
	struct fake_mem *m = malloc(sizeof(*m));
	struct hs_stats_snapshot s;

	(void)state;
	make_good(m);
	assert_int_equal(parse(m, &s), 0);
	assert_true(s.consistent);
	assert_int_equal(s.tcaches, NCACHE);
	assert_int_equal(s.tcache_bytes, good_tcache_bytes());
	assert_int_equal(s.v[HEAPSCOPE_STAT_SMALL_SPAN_BYTES], 1 << 20);
	assert_int_equal(s.v[HEAPSCOPE_STAT_META_BYTES], 0);
	assert_int_equal(s.unwind_cache_bytes, 131072);
	/* no thread cache at all */
	m->b.tcache_head = 0;
	m->b.tcache_count = 0;
	assert_int_equal(parse(m, &s), 0);
	assert_int_equal(s.tcache_bytes, 0);
	/* the first cache being published: its count, not yet its head */
	m->b.tcache_count = 1;
	assert_int_equal(parse(m, &s), 0);
	assert_int_equal(s.tcache_bytes, 0);
	/* caches cannot hold more than left the central lists */
	make_good(m);
	m->b.values[HEAPSCOPE_STAT_SMALL_SPAN_BYTES] = 5000;
	m->b.values[HEAPSCOPE_STAT_SPAN_WASTE_BYTES] = 400;
	assert_int_equal(parse(m, &s), 0);
	assert_int_equal(s.tcache_bytes, 5000 - 400 - 4096);
	/* version 2 names its heap map; a version-1 block (same layout)
	 * is read as before and its reserved word is not taken for one */
	make_good(m);
	m->b.heap_map = 0x7f0000001000ull;
	assert_int_equal(parse(m, &s), 0);
	assert_int_equal(s.version, 2);
	assert_int_equal(s.heap_map_addr, 0x7f0000001000ull);
	m->b.version = 1;
	assert_int_equal(parse(m, &s), 0);
	assert_int_equal(s.version, 1);
	assert_int_equal(s.heap_map_addr, 0);
	assert_int_equal(s.tcache_bytes, good_tcache_bytes());
	free(m);
}

static void test_bad_headers(void **state)
{
	struct fake_mem *m = malloc(sizeof(*m));
	struct hs_stats_snapshot s;

	(void)state;
#define BAD(stmt)                                                              \
	do {                                                                   \
		make_good(m);                                                  \
		stmt;                                                          \
		assert_int_equal(parse(m, &s), -EBADMSG);                      \
	} while (0)
	BAD(m->b.magic ^= 1);
	BAD(m->b.version = HEAPSCOPE_STATS_VERSION + 1);
	BAD(m->b.version = 0);
	BAD(m->b.header_size = sizeof(m->b) - 8);
	BAD(m->b.value_count = HEAPSCOPE_STAT_V1_COUNT - 1);
	BAD(m->b.value_count = HEAPSCOPE_STATS_MAX_VALUES + 1);
	BAD(m->b.class_count = 1);
	BAD(m->b.class_count = HEAPSCOPE_STATS_MAX_CLASSES + 1);
	BAD(m->b.class_size[0] = 8);
	BAD(m->b.class_size[3] = m->b.class_size[2]);
	BAD(m->b.class_size[NCLASS - 1] = 0);
	BAD(m->b.unwind_cache_bytes = 1ull << 40);
	BAD(m->b.tcache_count = HEAPSCOPE_STATS_MAX_CACHES + 1);
	BAD(m->b.tcache_count = 0); /* a head without a count */
	BAD(m->b.tcache_head += 4); /* misaligned */
	BAD(m->b.tcache_next_offset = 4);
	BAD(m->b.tcache_next_offset = HS_STATS_MAX_TCACHE_BYTES);
	BAD(m->b.tcache_list_size = 2);
	BAD(m->b.tcache_list_size = HS_STATS_MAX_LIST_SIZE + 8);
	BAD(m->b.tcache_length_offset = 2);
	BAD(m->b.tcache_length_offset = m->b.tcache_list_size);
	BAD(m->b.tcache_lists_offset = HS_STATS_MAX_TCACHE_BYTES);
	BAD(m->b.values[HEAPSCOPE_STAT_PAGES_BYTES] =
		    (int64_t)HS_STATS_MAX_VALUE + 1);
	BAD(m->b.values[HEAPSCOPE_STAT_RECORD_BYTES] = INT64_MAX);
#undef BAD
	free(m);
}

static void test_hostile_caches(void **state)
{
	struct fake_mem *m = malloc(sizeof(*m));
	struct hs_stats_snapshot s;

	(void)state;
	/* a loop: the last cache points back to the first */
	make_good(m);
	m->caches[NCACHE - 1].next = cache_addr(0);
	assert_int_equal(parse(m, &s), -EBADMSG);
	/* a loop within the stated count: 0 -> 1 -> 0, count 3 */
	make_good(m);
	m->caches[1].next = cache_addr(0);
	m->b.tcache_count = 3;
	assert_int_equal(parse(m, &s), -EBADMSG);
	/* longer than stated */
	make_good(m);
	m->b.tcache_count = NCACHE - 1;
	assert_int_equal(parse(m, &s), -EBADMSG);
	/* an impossible count of objects */
	make_good(m);
	m->caches[1].lists[2].length = HS_STATS_MAX_LIST_LENGTH + 1;
	assert_int_equal(parse(m, &s), -EBADMSG);
	/* a link into unreadable memory, or misaligned */
	make_good(m);
	m->caches[0].next = 0x7fff0000;
	assert_int_equal(parse(m, &s), -EFAULT);
	make_good(m);
	m->caches[0].next = cache_addr(1) + 1;
	assert_int_equal(parse(m, &s), -EBADMSG);
	/* the block itself unreadable */
	make_good(m);
	assert_int_equal(hs_stats_block__read(mem_read, m, 8, &s), -EFAULT);
	free(m);
}

static void test_busy_writer(void **state)
{
	struct fake_mem *m = malloc(sizeof(*m));
	struct hs_stats_snapshot s;

	(void)state;
	make_good(m);
	m->bump = 1;
	assert_int_equal(parse(m, &s), 0);
	assert_false(s.consistent);
	assert_int_equal(s.retries, HS_STATS_MAX_RETRIES);
	/* bounded: the block read 1 + MAX_RETRIES times, then the caches
	 * (two reads each) */
	assert_int_equal(m->reads, 1 + HS_STATS_MAX_RETRIES + 2 * NCACHE);
	free(m);
}

static void test_garbage(void **state)
{
	struct fake_mem *m = malloc(sizeof(*m));
	struct hs_stats_snapshot s;
	int ok = 0;

	(void)state;
	srand(18);
	for (int round = 0; round < 2000; round++) {
		uint8_t *p = (uint8_t *)m;
		int err;

		make_good(m);
		/* keep the magic, version and size; flip bytes elsewhere */
		for (int k = 0; k < 1 + round % 16; k++) {
			size_t at =
				16 +
				(size_t)rand() %
					(offsetof(struct fake_mem, bump) - 16);
			p[at] = (uint8_t)rand();
		}
		err = parse(m, &s);
		assert_true(err == 0 || err == -EBADMSG || err == -EFAULT);
		if (!err) {
			ok++;
			for (int i = 0; i < HEAPSCOPE_STAT_V1_COUNT; i++)
				assert_true(s.v[i] <= HS_STATS_MAX_VALUE);
			assert_true(s.tcaches <= HEAPSCOPE_STATS_MAX_CACHES);
		}
	}
	/* some blocks stay valid (a flipped byte in a free field) */
	assert_true(ok > 0);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_hostile_caches),
		cmocka_unit_test(test_busy_writer),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
