/* SPDX-License-Identifier: MIT */
/*
 * tests/test_shard_vacated.c - a shard whose last thread exits gives its
 * memory back (core/central_freelist.h hs_central_shard_vacated).
 *
 * The main thread holds the first shard; a second thread (a shard of its
 * own) allocates 3 spans' worth of 64-byte objects, frees them all and
 * exits.  Its flush sends the objects back to its shard: whole batches
 * into the transfer cache, the rest onto spans, one empty span kept
 * (KEEP_EMPTY).  Its exit, the shard left with no live thread, gives the
 * batches back to their spans and every empty span to the page heap: no
 * page of those objects carries the class in the pagemap any more, and
 * the bytes of small spans are what they were before the thread ran
 * (main allocates nothing meanwhile).  Before, the kept span and the
 * batches stayed on the shard until a thread took it again.  Linked with
 * libheapscope.a, sampling off (a sampled object is not on a span).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <cmocka.h>

#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/pagemap.h"
#include "core/size_class.h"
#include "core/thread_cache.h"

#define SIZE 64
#define NMAX 4096

static void *objs[NMAX];
static unsigned nobjs;
static unsigned child_shard;

static void *churn(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < nobjs; i++)
		objs[i] = malloc(SIZE);
	child_shard = (*(hs_tcache_t *volatile *)&hs_thread.tc)->shard;
	for (unsigned i = 0; i < nobjs; i++)
		free(objs[i]);
	return NULL;
}

static unsigned pages_with_class(unsigned cls)
{
	unsigned n = 0;
	for (unsigned i = 0; i < nobjs; i++) {
		uintptr_t e =
			hs_pagemap_entry((uintptr_t)objs[i] >> HS_PAGE_SHIFT);
		n += hs_pm_entry_class(e) == cls;
	}
	return n;
}

static void test_vacated_shard_gives_back(void **state)
{
	unsigned cls = hs_size_to_class(SIZE);
	pthread_t t;

	(void)state;
	nobjs = 3 * hs_classes[cls].objects;
	assert_true(nobjs <= NMAX);
	/* main's cache, on its shard, with no span of the class (the thread
	 * would adopt it: core/central_freelist.c adopt) */
	free(malloc(16));
	unsigned main_shard = (*(hs_tcache_t *volatile *)&hs_thread.tc)->shard;
	/* a thread that allocates nothing first: what the C library
	 * allocates for a thread (once) is not counted */
	unsigned n = nobjs;
	nobjs = 0;
	assert_int_equal(pthread_create(&t, NULL, churn, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	nobjs = n;
	int64_t spans_before = hs_stat_get(HS_STAT_small_span_bytes);

	assert_int_equal(pthread_create(&t, NULL, churn, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(hs_central_nshards() >= 2);
	assert_int_not_equal(child_shard, main_shard);
	assert_int_equal(pages_with_class(cls), 0);
	assert_int_equal(hs_stat_get(HS_STAT_small_span_bytes), spans_before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vacated_shard_gives_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
