/* SPDX-License-Identifier: MIT */
/*
 * tests/test_remote_owner.c - remote frees go back to the shard of the
 * thread that allocated them (core/free.h hs_free_inline, core/thread_cache.c
 * hs_tc_remote_push), and a span whose objects all came back stays on its
 * shard (core/central_freelist.c, KEEP_EMPTY).
 *
 * - Thread A (main) allocates N objects of a class nothing else here
 *   uses; thread B frees them all (N a whole number of batches).  None of
 *   them enters B's list; B's next N mallocs of the class return none of
 *   them; A's next L + N mallocs (L: what A's list held) return every one.
 * - A allocates 3 spans' worth of a 12 KiB class, B frees them all: the
 *   spans A's shard keeps (one span, or as many as fit in 64 KiB) are
 *   still small-object spans of the class (their pagemap entries carry
 *   it), the others are not; A's next malloc of the class comes from a
 *   kept one, and malloc_trim's drain gives them all back.
 * Linked with libheapscope.a, sampling off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/central_freelist.h"
#include "core/pagemap.h"
#include "core/size_class.h"
#include "core/thread_cache.h"

#define SIZE 720  /* a class of its own in this program */
#define BIG 12288 /* spans of a few objects */
#define MAXN 1024

static void *objs[MAXN], *b_got[MAXN];
static int nobj;
static size_t obj_size;
static uint32_t b_list_len, b_remote_n;

/* volatile: the compiler takes malloc for a call that writes no memory
 * but the block it returns, and malloc sets the pointer */
static hs_tcache_t *cache(void)
{
	return *(hs_tcache_t *volatile *)&hs_thread.tc;
}

static int in_objs(const void *p)
{
	for (int i = 0; i < nobj; i++)
		if (objs[i] == p)
			return 1;
	return 0;
}

/* Thread B: frees objs[], then (for the first test) mallocs nobj. */
static void *remote_freer(void *arg)
{
	int then_malloc = arg != NULL;
	unsigned cls = hs_size_to_class(obj_size);
	free(malloc(16)); /* B's cache is active */
	for (int i = 0; i < nobj; i++)
		free(objs[i]);
	b_list_len = cache()->lists[cls].length;
	b_remote_n = cache()->remote[cls].n;
	if (then_malloc)
		for (int i = 0; i < nobj; i++)
			b_got[i] = malloc(obj_size);
	return NULL; /* b_got[] stays allocated: B's exit flush keeps off them
		      */
}

static void test_remote_frees_go_home(void **state)
{
	(void)state;
	unsigned cls = hs_size_to_class(SIZE);
	const hs_class_info_t *ci = &hs_classes[cls];
	pthread_t t;

	nobj = (int)ci->batch * 4;
	obj_size = SIZE;
	assert_true(nobj <= MAXN);
	free(malloc(16)); /* A's cache is active */
	for (int i = 0; i < nobj; i++)
		assert_non_null(objs[i] = malloc(SIZE));
	uint32_t left = cache()->lists[cls].length;
	unsigned a_shard = cache()->shard;
	for (int i = 0; i < nobj; i++)
		assert_int_equal(hs_pm_entry_shard(hs_pagemap_entry(
					 (uintptr_t)objs[i] >> HS_PAGE_SHIFT)),
				 a_shard);

	assert_int_equal(pthread_create(&t, NULL, remote_freer, objs), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(b_list_len, 0);
	assert_int_equal(b_remote_n, 0); /* whole batches: all sent home */
	for (int i = 0; i < nobj; i++)
		assert_false(in_objs(b_got[i]));

	/* A's list, then its shard's transfer cache: every one of them */
	int back = 0;
	static void *a_got[MAXN + 4096];
	assert_true(left + (uint32_t)nobj <= MAXN + 4096);
	for (uint32_t i = 0; i < left + (uint32_t)nobj; i++) {
		a_got[i] = malloc(SIZE);
		back += in_objs(a_got[i]);
	}
	assert_int_equal(back, nobj);
	assert_int_equal(hs_central_is_valid(), 1);
	for (uint32_t i = 0; i < left + (uint32_t)nobj; i++)
		free(a_got[i]);
}

/* Distinct spans among spans[0..nobj) whose pages' entries still carry
 * class cls (a small-object span in use). */
static int spans_of_class(hs_span_t *const *spans, unsigned cls)
{
	int n = 0;
	for (int i = 0; i < nobj; i++) {
		int seen = 0;
		for (int j = 0; j < i; j++)
			seen |= spans[j] == spans[i];
		if (!seen &&
		    hs_pm_entry_class(hs_pagemap_entry((uintptr_t)objs[i] >>
						       HS_PAGE_SHIFT)) == cls)
			n++;
	}
	return n;
}

static void test_empty_span_stays(void **state)
{
	(void)state;
	unsigned cls = hs_size_to_class(BIG);
	const hs_class_info_t *ci = &hs_classes[cls];
	const int64_t span = (int64_t)ci->pages << HS_PAGE_SHIFT;
	pthread_t t;

	free(malloc(16));
	hs_tc_flush_current(); /* nothing of the class kept anywhere */
	nobj = (int)ci->objects * 3;
	obj_size = BIG;
	assert_true(nobj <= MAXN);
	for (int i = 0; i < nobj; i++)
		assert_non_null(objs[i] = malloc(BIG));
	/* what A's list holds goes back: its spans empty only then */
	hs_tc_flush_current();
	hs_span_t *spans[MAXN];
	for (int i = 0; i < nobj; i++)
		spans[i] = hs_pagemap_lookup(objs[i]);
	assert_int_equal(pthread_create(&t, NULL, remote_freer, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);

	/* the spans kept: one, or as many as fit in 64 KiB (at most the 3);
	 * the others went to the page heap, which cleared their class */
	int64_t keep = span > (64 << 10) ? span : (64 << 10) / span * span;
	if (keep > 3 * span)
		keep = 3 * span;
	assert_int_equal(spans_of_class(spans, cls), keep / span);
	assert_int_equal(hs_central_is_valid(), 1);

	/* A's next object of the class comes from a kept span */
	void *p = malloc(BIG);
	int found = 0;
	for (int i = 0; i < nobj; i++)
		found |= hs_pagemap_lookup(p) == spans[i];
	assert_true(found);
	free(p);
	hs_tc_flush_current(); /* the drain gives the kept spans back */
	assert_int_equal(spans_of_class(spans, cls), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_frees_go_home),
		cmocka_unit_test(test_empty_span_stays),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
