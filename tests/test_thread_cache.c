/* SPDX-License-Identifier: MIT */
/*
 * tests/test_thread_cache.c - thread-cache list limits (thread_cache.c).
 *
 * A class the thread only frees (objects another thread allocated, two
 * overflows with no refill between them) keeps at most one batch, not
 * the class's max_cached; the thread's next refill of that class
 * restores max_cached.  A thread's first refill of a class takes at most
 * 8 KiB of objects, the next ones a batch.  Linked with libheapscope.a,
 * sampling off (a sampled object would take the sampled free path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/size_class.h"
#include "core/thread_cache.h"

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

/* A thread's first refill of a class takes at most 8 KiB of objects
 * (carving writes every object it hands out: a whole batch of a 4 KiB
 * class made 64 KiB resident for one malloc), the next one a batch. */
static uint32_t first_len[3], second_len[3];

/* volatile: the compiler takes malloc for a call that writes no memory
 * but the block it returns */
static uint32_t list_length(unsigned cls)
{
	return *(volatile uint32_t *)&hs_tc.lists[cls].length;
}

static void *first_refills(void *arg)
{
	static const size_t sizes[3] = {4096, 1024, 64};
	(void)arg;
	for (int i = 0; i < 3; i++) {
		unsigned cls = hs_size_to_class(sizes[i]);
		/* stored: an unused result lets the compiler drop malloc */
		objs[0] = malloc(sizes[i]);
		first_len[i] = list_length(cls);
		while (list_length(cls))
			objs[0] = malloc(sizes[i]); /* kept: not freed */
		objs[0] = malloc(sizes[i]);
		second_len[i] = list_length(cls);
	}
	return NULL;
}

static void test_first_refill_small(void **state)
{
	static const size_t sizes[3] = {4096, 1024, 64};
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, first_refills, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (int i = 0; i < 3; i++) {
		const hs_class_info_t *ci =
			&hs_classes[hs_size_to_class(sizes[i])];
		size_t cap = 8192 / ci->size ? 8192 / ci->size : 1;
		uint32_t want = ci->batch < cap ? ci->batch : (uint32_t)cap;
		assert_int_equal(first_len[i], want - 1);
		assert_int_equal(second_len[i], ci->batch - 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_only_list),
		cmocka_unit_test(test_first_refill_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
