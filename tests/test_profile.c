// SPDX-License-Identifier: MIT
/*
 * test_profile.c - cmocka tests of the collector's live set (merge of
 * registry records and events, tombstones, sequence gaps), its aggregation
 * per stack, and the folded export (order, merging, values, atomic write).
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

#include "export.h"
#include "profiles.h"

static struct hs_sample mk(uint64_t seq, uint64_t r, uint64_t a, uint64_t w,
			   uint32_t depth, const uint64_t *stack)
{
	struct hs_sample s = {.seq = seq,
			      .requested = r,
			      .allocated = a,
			      .weight = w,
			      .depth = depth};

	memcpy(s.stack, stack, depth * sizeof(*stack));
	return s;
}

static const char *fake_sym(void *ctx, uint64_t addr)
{
	static char buf[8][32];
	static int i;

	(void)ctx;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "f%llu", (unsigned long long)addr);
	return buf[i];
}

static void test_estimates(void **state)
{
	uint64_t st[] = {1};
	struct hs_sample s = mk(1, 99, 112, 1000, 1, st);

	(void)state;
	assert_true(hs_sample_estimate(&s, HS_VALUE_INUSE) == 1120.0);
	assert_true(hs_sample_estimate(&s, HS_VALUE_REQUESTED) == 990.0);
	assert_true(hs_sample_estimate(&s, HS_VALUE_OBJECTS) == 10.0);
	s = mk(2, 0, 16, 100, 1, st); /* 0-byte request: units of r + 1 = 1 */
	assert_true(hs_sample_estimate(&s, HS_VALUE_INUSE) == 1600.0);
	assert_true(hs_sample_estimate(&s, HS_VALUE_REQUESTED) == 0.0);
}

static void test_merge_duplicates_and_tombstones(void **state)
{
	struct hs_profile *p = hs_profile__new();
	uint64_t st[] = {1, 2};
	struct hs_sample s1 = mk(1, 10, 16, 100, 2, st);
	struct hs_sample s2 = mk(2, 10, 16, 100, 2, st);
	struct hs_sample s3 = mk(3, 10, 16, 100, 2, st);

	(void)state;
	assert_non_null(p);
	assert_int_equal(hs_profile__alloc(p, &s1), 0); /* registry */
	assert_int_equal(hs_profile__alloc(p, &s1), 1); /* event: duplicate */
	assert_int_equal(hs_profile__live(p), 1);
	assert_int_equal(hs_profile__free_seq(p, 1), 0);
	assert_int_equal(hs_profile__live(p), 0);
	/* Free seen before its alloc: tombstone, then the alloc is cancelled.
	 */
	assert_int_equal(hs_profile__free_seq(p, 2), 1);
	assert_int_equal(hs_profile__alloc(p, &s2), 1);
	assert_int_equal(hs_profile__live(p), 0);
	/* ...and not resurrected by a later duplicate either way. */
	assert_int_equal(hs_profile__alloc(p, &s3), 0);
	assert_int_equal(hs_profile__free_seq(p, 3), 0);
	assert_int_equal(hs_profile__free_seq(p, 3), 1);
	assert_int_equal(hs_profile__live(p), 0);
	assert_int_equal(hs_profile__alloc(p, &s1), 0); /* seq 1 was removed */
	assert_int_equal(hs_profile__live(p), 1);
	/* Invalid input. */
	s1.seq = 0;
	assert_int_equal(hs_profile__alloc(p, &s1), -EINVAL);
	s3.depth = 65;
	assert_int_equal(hs_profile__alloc(p, &s3), -EINVAL);
	hs_profile__free(p);
}

static void test_many_and_grow(void **state)
{
	struct hs_profile *p = hs_profile__new();
	uint64_t st[] = {7};

	(void)state;
	for (uint64_t i = 1; i <= 100000; i++) {
		struct hs_sample s = mk(i, 1, 16, 2, 1, st);

		assert_int_equal(hs_profile__alloc(p, &s), 0);
	}
	/* Remove every other one: backward-shift deletion must keep the
	 * remaining ones reachable. */
	for (uint64_t i = 1; i <= 100000; i += 2)
		assert_int_equal(hs_profile__free_seq(p, i), 0);
	assert_int_equal(hs_profile__live(p), 50000);
	for (uint64_t i = 2; i <= 100000; i += 2)
		assert_int_equal(hs_profile__free_seq(p, i), 0);
	assert_int_equal(hs_profile__live(p), 0);
	hs_profile__free(p);
}

static void test_seq_gaps(void **state)
{
	struct hs_profile *p = hs_profile__new();

	(void)state;
	assert_int_equal(hs_profile__seq_lost(p), 0);
	hs_profile__note_seq(p, 10);
	hs_profile__note_seq(p, 11);
	hs_profile__note_seq(p, 14); /* 12, 13 lost */
	hs_profile__note_seq(p, 9);  /* late but present */
	assert_int_equal(hs_profile__seq_lost(p), 2);
	hs_profile__free(p);
}

static void test_aggregate_and_folded(void **state)
{
	struct hs_profile *p = hs_profile__new();
	uint64_t a[] = {3, 2, 1}, b[] = {5, 1};
	struct hs_sample s;
	struct hs_stack_agg *aggs;
	struct hs_folded_line *lines;
	size_t n, nl;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	s = mk(1, 99, 112, 1000, 3, a); /* 1120 */
	hs_profile__alloc(p, &s);
	s = mk(2, 99, 112, 3000, 3, a); /* 3360 */
	hs_profile__alloc(p, &s);
	s = mk(3, 4095, 4096, 8192, 2, b); /* 8192 */
	hs_profile__alloc(p, &s);
	s = mk(4, 0, 16, 100, 0, a); /* no stack: 1600 */
	hs_profile__alloc(p, &s);
	assert_int_equal(hs_profile__aggregate(p, &aggs, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(hs_folded__build(aggs, n, HS_VALUE_INUSE, fake_sym,
					  NULL, &lines, &nl),
			 0);
	assert_int_equal(nl, 3);
	f = open_memstream(&text, &len);
	assert_int_equal(hs_folded__write(f, lines, nl), 0);
	fclose(f);
	/* Root first (stack arrays are innermost first), value descending. */
	assert_string_equal(text, "f1;f5 8192\n"
				  "f1;f2;f3 4480\n"
				  "[no stack] 1600\n");
	free(text);
	hs_folded__free(lines, nl);

	assert_int_equal(hs_folded__build(aggs, n, HS_VALUE_OBJECTS, fake_sym,
					  NULL, &lines, &nl),
			 0);
	assert_string_equal(lines[0].stack, "[no stack]");
	assert_true(lines[0].value == 100.0);
	assert_true(lines[1].value == 40.0);
	hs_folded__free(lines, nl);
	free(aggs);
	hs_profile__free(p);
}

static const char *same_sym(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr == 1 ? "root" : "leaf;x"; /* ';' must be escaped */
}

static void test_folded_merges_same_text(void **state)
{
	struct hs_profile *p = hs_profile__new();
	uint64_t a[] = {2, 1}, b[] = {3, 1};
	struct hs_stack_agg *aggs;
	struct hs_folded_line *lines;
	size_t n, nl;
	struct hs_sample s;

	(void)state;
	s = mk(1, 9, 16, 10, 2, a);
	hs_profile__alloc(p, &s);
	s = mk(2, 9, 16, 20, 2, b);
	hs_profile__alloc(p, &s);
	assert_int_equal(hs_profile__aggregate(p, &aggs, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(hs_folded__build(aggs, n, HS_VALUE_INUSE, same_sym,
					  NULL, &lines, &nl),
			 0);
	assert_int_equal(nl, 1);
	assert_string_equal(lines[0].stack, "root;leaf_x");
	assert_true(lines[0].value == 48.0);
	assert_int_equal(lines[0].samples, 2);
	hs_folded__free(lines, nl);
	free(aggs);
	hs_profile__free(p);
}

static void test_write_file_atomic(void **state)
{
	char dir[] = "/tmp/hs_test_XXXXXX", path[64], buf[64] = {0};
	struct hs_folded_line l = {.stack = "a;b", .value = 41.6};
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	assert_int_equal(hs_folded__write_file(path, &l, 1), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "a;b 42\n");
	unlink(path);
	rmdir(dir);
	assert_int_equal(hs_folded__write_file("/nonexistent/dir/x", &l, 1),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimates),
		cmocka_unit_test(test_merge_duplicates_and_tombstones),
		cmocka_unit_test(test_many_and_grow),
		cmocka_unit_test(test_seq_gaps),
		cmocka_unit_test(test_aggregate_and_folded),
		cmocka_unit_test(test_folded_merges_same_text),
		cmocka_unit_test(test_write_file_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
