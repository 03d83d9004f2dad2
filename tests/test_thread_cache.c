/* SPDX-License-Identifier: MIT */
/*
 * tests/test_thread_cache.c - thread-cache list limits (thread_cache.c).
 *
 * A class the thread only frees (objects another thread allocated, two
 * overflows with no refill between them) keeps at most one batch, not
 * the class's max_cached; the thread's next refill of that class
 * restores max_cached.  Linked with libheapscope.a, sampling off (a
 * sampled object would take the sampled free path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <cmocka.h>

#include "size_class.h"
#include "thread_cache.h"

#define SIZE 64
#define N 640 /* 10 batches of the 64-byte class */

static void *objs[N];

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++)
		objs[i] = malloc(SIZE);
	return NULL;
}

static void test_free_only_list(void **state)
{
	unsigned cls = hs_size_to_class(SIZE);
	const hs_class_info_t *ci = &hs_classes[cls];
	pthread_t t;

	(void)state;
	assert_true(ci->batch * 10 <= N);
	assert_true(ci->max_cached > ci->batch); /* else nothing to adapt */
	free(malloc(16)); /* this thread's cache is active */
	assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (int i = 0; i < N; i++) {
		assert_non_null(objs[i]);
		free(objs[i]);
		assert_true(hs_tc.lists[cls].length <= ci->max_cached);
	}
	/* 10 batches freed, no refill: limited to one batch */
	assert_int_equal(hs_tc.lists[cls].max_length, ci->batch);
	assert_true(hs_tc.lists[cls].length <= ci->batch);

	/* mallocs empty the list; the refill restores max_cached */
	uint32_t had = hs_tc.lists[cls].length;
	for (uint32_t i = 0; i <= had; i++)
		objs[i] = malloc(SIZE);
	assert_int_equal(hs_tc.lists[cls].max_length, ci->max_cached);
	for (uint32_t i = 0; i <= had; i++)
		free(objs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_only_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
