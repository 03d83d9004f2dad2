// SPDX-License-Identifier: MIT
/*
 * test_lifetime_layout.c - the lifetime profile's layout and pprof types
 * (issue 17, item 6; collector/profiles/window.c): the free stack loses
 * the outer frames it shares with the allocation stack (same return
 * addresses from the root), a caller that called both from different
 * places stays, stacks that fill HEAPSCOPE_MAX_FRAMES are not trimmed;
 * pprof gets objects, a sum of lifetimes (Σ c·t) in nanoseconds, min and
 * max, never a mean.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "export.h"
#include "profiles.h"

/* One sample (W = 100, r = 99: one object) allocated at t with the
 * stack astack (leaf first). */
static struct hs_sample mk(uint64_t seq, uint64_t t, const uint64_t *astack,
			   uint32_t depth)
{
	struct hs_sample s = {.seq = seq,
			      .requested = 99,
			      .allocated = 112,
			      .weight = 100,
			      .depth = depth,
			      .time_ns = t,
			      .tid = 1};

	memcpy(s.stack, astack, depth * sizeof(*astack));
	return s;
}

/* The one lifetime stack after freeing a (allocated with astack) at
 * time 2000 with fstack. */
static struct hs_stack_agg one_pair(const uint64_t *astack, uint32_t adepth,
				    const uint64_t *fstack, uint32_t fdepth)
{
	struct hs_window *w = hs_window__new(1000);
	struct hs_sample a = mk(1, 1500, astack, adepth);
	struct hs_stack_agg *aggs, out;
	size_t n;

	assert_non_null(w);
	assert_int_equal(hs_window__live_free(w, &a, 2000, 1, fstack, fdepth),
			 0);
	assert_int_equal(hs_window__lifetime(w, &aggs, &n), 0);
	assert_int_equal(n, 1);
	out = aggs[0];
	free(aggs);
	hs_window__free(w);
	return out;
}

static void test_shared_root_dropped(void **state)
{
	/* alloc: f <- g <- main@0x300 <- libc_start <- _start
	 * free:  free_it <- main@0x310 <- libc_start <- _start
	 * main called g and free_it from different places: main@0x310
	 * stays (it says where), libc_start and _start go. */
	const uint64_t astack[] = {0x100, 0x200, 0x300, 0x400, 0x500};
	const uint64_t fstack[] = {0x900, 0x310, 0x400, 0x500};
	struct hs_stack_agg a;

	(void)state;
	a = one_pair(astack, 5, fstack, 4);
	assert_int_equal(a.depth, 2 + 1 + 5);
	assert_true(a.stack[0] == 0x900 && a.stack[1] == 0x310);
	assert_true(a.stack[2] == HS_FREE_MARKER);
	assert_memory_equal(a.stack + 3, astack, sizeof(astack));
}

static void test_freed_where_allocated(void **state)
{
	/* f allocates and frees: only f's own frame differs */
	const uint64_t astack[] = {0x100, 0x200, 0x500};
	const uint64_t fstack[] = {0x108, 0x200, 0x500};
	struct hs_stack_agg a;

	(void)state;
	a = one_pair(astack, 3, fstack, 3);
	assert_int_equal(a.depth, 1 + 1 + 3);
	assert_true(a.stack[0] == 0x108 && a.stack[1] == HS_FREE_MARKER);
}

static void test_nothing_shared(void **state)
{
	/* different roots (a thread's and main's): the whole free stack */
	const uint64_t astack[] = {0x100, 0x500};
	const uint64_t fstack[] = {0x900, 0x910, 0x920};
	struct hs_stack_agg a;

	(void)state;
	a = one_pair(astack, 2, fstack, 3);
	assert_int_equal(a.depth, 3 + 1 + 2);
	assert_memory_equal(a.stack, fstack, sizeof(fstack));
}

static void test_full_stack_untrimmed(void **state)
{
	/* a free stack of HEAPSCOPE_MAX_FRAMES may have lost its root: its
	 * outer 60 frames equal the 60-frame allocation stack, which would
	 * leave 4 free frames, but that is no proof of a shared path, so
	 * the innermost HS_LT_FREE_FRAMES are kept (and the allocation
	 * stack its innermost MAX - 1 - 16) */
	uint64_t astack[60], fstack[HEAPSCOPE_MAX_FRAMES];
	struct hs_stack_agg a;

	(void)state;
	for (int i = 0; i < 60; i++)
		astack[i] = fstack[4 + i] = 0x1000 + (uint64_t)i;
	for (int i = 0; i < 4; i++)
		fstack[i] = 0x9000 + (uint64_t)i;
	a = one_pair(astack, 60, fstack, HEAPSCOPE_MAX_FRAMES);
	assert_int_equal(a.depth, HEAPSCOPE_MAX_FRAMES);
	assert_memory_equal(a.stack, fstack,
			    HS_LT_FREE_FRAMES * sizeof(*fstack));
	assert_true(a.stack[HS_LT_FREE_FRAMES] == HS_FREE_MARKER);
	assert_memory_equal(a.stack + HS_LT_FREE_FRAMES + 1, astack,
			    (HEAPSCOPE_MAX_FRAMES - 1 - HS_LT_FREE_FRAMES) *
				    sizeof(*astack));
}

static void test_pprof_types(void **state)
{
	/* three objects of one stack, lifetimes 10, 30, 80 ns: objects 3,
	 * lifetime Σ = 120 (a sum: mean 40 = 120 / 3), min 10, max 80 */
	const uint64_t astack[] = {0x100, 0x500};
	const uint64_t fstack[] = {0x900, 0x500};
	const uint64_t lts[] = {10, 30, 80};
	struct hs_window *w = hs_window__new(1000);
	struct hs_pprof_meta m = {0};
	struct hs_stack_agg *aggs;
	int64_t v[HS_PPROF_MAX_TYPES];
	size_t n, i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct hs_sample s = mk(i + 1, 2000, astack, 2);

		assert_int_equal(hs_window__live_free(w, &s, 2000 + lts[i], 1,
						      fstack, 2),
				 0);
	}
	assert_int_equal(hs_window__lifetime(w, &aggs, &n), 0);
	assert_int_equal(n, 1);
	hs_window__pprof_lifetime(&m);
	assert_true(m.ntypes >= 4 && m.ntypes <= HS_PPROF_MAX_TYPES);
	m.values(&aggs[0], v);
	for (i = 0; i < m.ntypes; i++) {
		const char *t = m.type_names[i], *u = m.type_units[i];

		/* no mean among the types: pprof would sum it */
		assert_null(strstr(t, "mean"));
		if (!strcmp(t, "objects")) {
			assert_string_equal(u, "count");
			assert_int_equal(v[i], 3);
		} else if (!strcmp(t, "lifetime")) {
			assert_string_equal(u, "nanoseconds");
			assert_int_equal(v[i], 120);
		} else if (!strcmp(t, "lifetime_min")) {
			assert_string_equal(u, "nanoseconds");
			assert_int_equal(v[i], 10);
		} else if (!strcmp(t, "lifetime_max")) {
			assert_string_equal(u, "nanoseconds");
			assert_int_equal(v[i], 80);
		}
	}
	/* folded --value lifetime: the same sum */
	assert_true(hs_agg_value(&aggs[0], HS_VALUE_LIFETIME_SUM) == 120);
	assert_string_equal(m.type_names[0], "objects");
	assert_string_equal(m.type_names[1], "lifetime");
	free(aggs);
	hs_window__free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_root_dropped),
		cmocka_unit_test(test_freed_where_allocated),
		cmocka_unit_test(test_nothing_shared),
		cmocka_unit_test(test_full_stack_untrimmed),
		cmocka_unit_test(test_pprof_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
