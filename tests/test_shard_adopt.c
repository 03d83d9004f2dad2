/* SPDX-License-Identifier: MIT */
/*
 * tests/test_shard_adopt.c - a shard with no span of a class with free
 * objects takes the partial spans of an idle shard before new ones from
 * the page heap (core/central_freelist.c adopt, hs_central_shards_idle).
 *
 * A second thread (a shard of its own: the main thread holds the first)
 * allocates 3 spans' worth of objects of one class and frees every other
 * one: its spans are left half full.  Then the main thread, which never
 * had an object of that class, allocates half as many as were freed:
 *  - vacated: the thread has exited (its shard has no live thread) 50 ms
 *    ago, over the 10 ms (at most 14 on the coarse clock) after which a
 *    shard whose refill count stands still is idle
 *    (hs_central_shards_idle looked once before the wait); every object
 *    main gets lies in one of the thread's spans, the bytes of small
 *    spans do not grow, and those spans' pagemap entries carry main's
 *    shard;
 *  - idle: the thread is alive but has not refilled for 50 ms: the same;
 *  - active: the thread refilled after that look and main asks for one
 *    object (one refill, one look, which sees the count moved): the
 *    thread's spans stay where they are, main's object comes from a new
 *    span of its own.
 * hs_central_is_valid holds after each.  Linked with libheapscope.a,
 * sampling off (a sampled object is not on a span).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/pagemap.h"
#include "core/size_class.h"
#include "core/span.h"
#include "core/thread_cache.h"

#define NMAX 4096

static size_t size;	 /* the class's object size */
static void *objs[NMAX]; /* the thread's objects, odd ones freed */
static unsigned nobjs;
static unsigned child_shard;
static int stay; /* 0: exit; 1: wait; 2: refill, then wait */
static pthread_barrier_t freed, go;
static void *extra; /* the refill of `active` */

static unsigned current_shard(void)
{
	return (*(hs_tcache_t *volatile *)&hs_thread.tc)->shard;
}

static void *churn(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < nobjs; i++)
		objs[i] = malloc(size);
	child_shard = current_shard();
	for (unsigned i = 1; i < nobjs; i += 2)
		free(objs[i]);
	if (!stay)
		return NULL;
	hs_tc_flush_current(); /* the frees onto the shard's lists */
	pthread_barrier_wait(&freed);
	pthread_barrier_wait(&go);
	if (stay == 2)
		extra = malloc(24); /* a refill of this shard */
	pthread_barrier_wait(&freed);
	pthread_barrier_wait(&go);
	return NULL;
}

/* Whether p lies in a span of one of the thread's objects. */
static int in_child_span(const void *p)
{
	const hs_span_t *s = hs_pagemap_lookup(p);
	for (unsigned i = 0; i < nobjs; i += 2)
		if (hs_pagemap_lookup(objs[i]) == s)
			return 1;
	return 0;
}

/* Runs the scenario for objects of `sz` bytes; returns how many of
 * main's objects came from the thread's spans (of *n), and the growth
 * of small span bytes in *grew. */
static unsigned run(size_t sz, int mode, unsigned *n, int64_t *grew)
{
	unsigned cls = hs_size_to_class(sz);
	static void *mine[NMAX];
	pthread_t t;

	size = hs_classes[cls].size;
	nobjs = 3 * hs_classes[cls].objects;
	assert_true(nobjs <= NMAX);
	stay = mode;
	assert_int_equal(pthread_barrier_init(&freed, NULL, 2), 0);
	assert_int_equal(pthread_barrier_init(&go, NULL, 2), 0);
	assert_int_equal(pthread_create(&t, NULL, churn, NULL), 0);
	if (mode) {
		pthread_barrier_wait(&freed);
		(void)hs_central_shards_idle(); /* the last look */
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&freed);
	} else {
		assert_int_equal(pthread_join(t, NULL), 0);
		(void)hs_central_shards_idle();
	}
	if (mode != 2)
		usleep(50 * 1000);
	unsigned main_shard = current_shard();
	assert_int_not_equal(child_shard, main_shard);
	*n = mode == 2 ? 1 : nobjs / 4; /* half of those freed */
	int64_t before = hs_stat_get(HS_STAT_small_span_bytes);
	unsigned inside = 0;
	for (unsigned i = 0; i < *n; i++) {
		mine[i] = malloc(size);
		inside += in_child_span(mine[i]);
	}
	*grew = hs_stat_get(HS_STAT_small_span_bytes) - before;
	assert_true(hs_central_is_valid());
	for (unsigned i = 0; i < *n; i++)
		if (in_child_span(mine[i]))
			assert_int_equal(
				hs_pm_entry_shard(hs_pagemap_entry(
					(uintptr_t)mine[i] >> HS_PAGE_SHIFT)),
				main_shard);
	if (mode) {
		pthread_barrier_wait(&go);
		assert_int_equal(pthread_join(t, NULL), 0);
	}
	for (unsigned i = 0; i < *n; i++)
		free(mine[i]);
	for (unsigned i = 0; i < nobjs; i += 2)
		free(objs[i]);
	free(extra);
	extra = NULL;
	pthread_barrier_destroy(&freed);
	pthread_barrier_destroy(&go);
	assert_true(hs_central_is_valid());
	return inside;
}

/* Every object main gets comes from the thread's spans, none new. */
static void expect_adopted(size_t sz, int mode)
{
	unsigned n;
	int64_t grew;
	unsigned inside = run(sz, mode, &n, &grew);
	assert_int_equal(inside, n);
	assert_int_equal(grew, 0);
}

static void test_adopt_vacated(void **state)
{
	(void)state;
	expect_adopted(64, 0);
}

static void test_adopt_idle(void **state)
{
	(void)state;
	expect_adopted(96, 1);
}

static void test_no_adopt_active(void **state)
{
	unsigned n;
	int64_t grew;
	(void)state;
	assert_int_equal(run(128, 2, &n, &grew), 0);
	assert_true(grew > 0);
}

int main(void)
{
	/* main's cache, on its shard, with no object of the classes used */
	free(malloc(16));
	free(malloc(16));
	assert_true(hs_central_nshards() >= 2);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adopt_vacated),
		cmocka_unit_test(test_adopt_idle),
		cmocka_unit_test(test_no_adopt_active),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
