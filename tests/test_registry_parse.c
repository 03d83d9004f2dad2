// SPDX-License-Identifier: MIT
/*
 * test_registry_parse.c - cmocka tests of the registry reader against
 * crafted and garbage registries held in a buffer: a good one, bad magic,
 * version and sizes, huge counts, records overlapping the header, depth >
 * 64, seq beyond next_seq, duplicate ids, a writer that never finishes
 * (bounded retries, then per-record copies), records changing under the
 * copy, an unreadable record array, random garbage.
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

#define BASE 0x10000ull /* fake target address of the buffer */
#define NREC 8

struct fake_mem {
	uint8_t buf[sizeof(struct heapscope_registry) +
		    NREC * sizeof(struct heapscope_record)];
	int bump_gen;	/* each read bumps the generation by 2 (busy writer) */
	int change_seq; /* 8-byte re-reads of a record's seq see a new id */
	int reads;
};

static struct heapscope_registry *hdr(struct fake_mem *m)
{
	return (struct heapscope_registry *)m->buf;
}

static struct heapscope_record *rec(struct fake_mem *m, int i)
{
	return (struct heapscope_record *)(m->buf +
					   sizeof(struct heapscope_registry)) +
	       i;
}

static int mem_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
	struct fake_mem *m = ctx;

	m->reads++;
	if (addr < BASE || addr - BASE > sizeof(m->buf) ||
	    len > sizeof(m->buf) - (addr - BASE))
		return -EFAULT;
	memcpy(dst, m->buf + (addr - BASE), len);
	if (m->change_seq && len == sizeof(uint64_t) &&
	    addr >= BASE + sizeof(struct heapscope_registry))
		*(uint64_t *)dst += 1000;
	if (m->bump_gen)
		hdr(m)->generation += 2;
	return 0;
}

static void init_good(struct fake_mem *m)
{
	struct heapscope_registry *h = hdr(m);

	memset(m, 0, sizeof(*m));
	h->magic = HEAPSCOPE_REGISTRY_MAGIC;
	h->version = HEAPSCOPE_REGISTRY_VERSION;
	h->header_size = sizeof(*h);
	h->record_size = sizeof(struct heapscope_record);
	h->max_frames = HEAPSCOPE_MAX_FRAMES;
	h->records = BASE + sizeof(*h);
	h->capacity = NREC;
	h->high_water = 3;
	h->live = 2;
	h->next_seq = 10;
	h->generation = 4;
	rec(m, 0)->seq = 7;
	rec(m, 0)->weight = 100;
	rec(m, 0)->depth = 2;
	rec(m, 0)->stack[0] = 0x1234;
	/* slot 1 free */
	rec(m, 2)->seq = 3;
	rec(m, 2)->weight = 50;
	rec(m, 2)->depth = 64;
}

static int read_reg(struct fake_mem *m, struct hs_registry_snapshot *s)
{
	return hs_registry__read(mem_read, m, BASE, s);
}

static void test_good(void **state)
{
	struct fake_mem *m = calloc(1, sizeof(*m));
	struct hs_registry_snapshot s;

	(void)state;
	init_good(m);
	assert_int_equal(read_reg(m, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.recs[0].seq, 3); /* sorted by id */
	assert_int_equal(s.recs[1].seq, 7);
	assert_int_equal(s.recs[1].stack[0], 0x1234);
	assert_int_equal(s.invalid, 0);
	hs_registry__free(&s);
	/* Empty registry. */
	hdr(m)->high_water = 0;
	hdr(m)->live = 0;
	assert_int_equal(read_reg(m, &s), 0);
	assert_int_equal(s.n, 0);
	hs_registry__free(&s);
	free(m);
}

static void expect_bad(struct fake_mem *m, int err)
{
	struct hs_registry_snapshot s;

	assert_int_equal(read_reg(m, &s), err);
	assert_null(s.recs);
	assert_int_equal(s.n, 0);
}

static void test_bad_headers(void **state)
{
	struct fake_mem *m = calloc(1, sizeof(*m));

	(void)state;
	init_good(m);
	hdr(m)->magic ^= 1;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->version = 2;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->header_size = 8;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->record_size = 1u << 31;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->max_frames = 128;
	expect_bad(m, -EBADMSG);
	/* Huge counts. */
	init_good(m);
	hdr(m)->capacity = UINT64_MAX;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->high_water = NREC + 1;
	hdr(m)->capacity = NREC;
	hdr(m)->high_water = 1ull << 40;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->live = 4;
	expect_bad(m, -EBADMSG);
	/* Record array wrapping the address space or looping onto the
	 * header. */
	init_good(m);
	hdr(m)->records = UINT64_MAX - 100;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->records = BASE;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->records = BASE - 600;
	expect_bad(m, -EBADMSG);
	init_good(m);
	hdr(m)->records = 0;
	expect_bad(m, -EBADMSG);
	/* Records outside readable memory. */
	init_good(m);
	hdr(m)->records = 0x7f0000000000ull;
	expect_bad(m, -EFAULT);
	/* Header itself unreadable. */
	{
		struct hs_registry_snapshot s;

		assert_int_equal(hs_registry__read(mem_read, m, 8, &s),
				 -EFAULT);
	}
	free(m);
}

static void test_bad_records(void **state)
{
	struct fake_mem *m = calloc(1, sizeof(*m));
	struct hs_registry_snapshot s;

	(void)state;
	init_good(m);
	rec(m, 0)->depth = 65; /* > 64: rejected, not copied */
	assert_int_equal(read_reg(m, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.invalid, 1);
	hs_registry__free(&s);

	init_good(m);
	rec(m, 0)->depth = UINT32_MAX;
	rec(m, 2)->seq = 10; /* >= next_seq */
	assert_int_equal(read_reg(m, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.invalid, 2);
	hs_registry__free(&s);

	init_good(m);
	rec(m, 2)->seq = 7; /* duplicate id */
	assert_int_equal(read_reg(m, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.invalid, 1);
	hs_registry__free(&s);

	/* More live slots than `live` claims: never consistent under the
	 * seqlock; the per-record fallback still takes both. */
	init_good(m);
	hdr(m)->live = 1;
	assert_int_equal(read_reg(m, &s), 0);
	assert_true(s.per_record);
	assert_int_equal(s.n, 2);
	hs_registry__free(&s);
	free(m);
}

static void test_seqlock(void **state)
{
	struct fake_mem *m = calloc(1, sizeof(*m));
	struct hs_registry_snapshot s;
	/* retries, then one per-record pass (header, chunk, seq re-reads) */
	int max_reads = HS_REGISTRY_MAX_RETRIES * 3 + 2 + NREC;

	(void)state;
	/* Stable: one attempt, not per-record. */
	init_good(m);
	assert_int_equal(read_reg(m, &s), 0);
	assert_false(s.per_record);
	assert_int_equal(s.retries, 0);
	hs_registry__free(&s);
	/* A writer that never finishes (odd generation): bounded retries,
	 * then the per-record copy. */
	init_good(m);
	hdr(m)->generation = 5;
	assert_int_equal(read_reg(m, &s), 0);
	assert_true(s.per_record);
	assert_int_equal(s.n, 2);
	assert_true(m->reads <= max_reads);
	hs_registry__free(&s);
	/* A writer that changes everything all the time. */
	init_good(m);
	m->bump_gen = 1;
	assert_int_equal(read_reg(m, &s), 0);
	assert_true(s.per_record);
	assert_true(m->reads <= max_reads);
	hs_registry__free(&s);
	/* ...and whose records change under the copy: none is taken. */
	init_good(m);
	m->bump_gen = 1;
	m->change_seq = 1;
	assert_int_equal(read_reg(m, &s), 0);
	assert_true(s.per_record);
	assert_int_equal(s.n, 0);
	hs_registry__free(&s);
	free(m);
}

static void test_garbage(void **state)
{
	struct fake_mem *m = calloc(1, sizeof(*m));
	struct hs_registry_snapshot s;
	unsigned seed = 12345;
	int ok = 0;

	(void)state;
	for (int iter = 0; iter < 2000; iter++) {
		init_good(m);
		/* Corrupt a few random bytes of the header and records. */
		for (int k = 0; k < 1 + iter % 16; k++) {
			seed = seed * 1103515245u + 12345u;
			m->buf[(seed >> 8) % sizeof(m->buf)] =
				(uint8_t)(seed >> 16);
		}
		m->reads = 0;
		if (read_reg(m, &s) == 0) {
			ok++;
			assert_true(s.n <= NREC);
			for (size_t i = 0; i < s.n; i++) {
				assert_true(s.recs[i].seq != 0);
				assert_true(s.recs[i].depth <=
					    HEAPSCOPE_MAX_FRAMES);
			}
			hs_registry__free(&s);
		} else {
			assert_null(s.recs);
		}
	}
	assert_true(ok > 0);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_seqlock),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
