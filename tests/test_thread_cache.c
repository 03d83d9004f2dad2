/* SPDX-License-Identifier: MIT */
/*
 * tests/test_thread_cache.c - thread-cache list limits (thread_cache.c).
 *
 * A class the thread only frees (objects another thread allocated, two
 * overflows with no refill between them) keeps at most one batch, not
 * the class's max_cached; the thread's next refill of that class
 * restores max_cached.  A thread's refills of a class start slow: the
 * first takes at most 1 KiB of objects (at least one), the second, if
 * the first was cut, at most 2 KiB, else a batch.  Linked with libheapscope.a,
 * sampling off (a sampled object would take the sampled free path).
 *
 * A class the thread allocates and frees in bursts longer than its list
 * (640 objects of 64 bytes, max_cached 64) grows its list's limit at
 * refills, by whole batches, to at least the burst (then a burst needs no
 * refill), never beyond the per-list cap (256 KiB / 4096 objects); the
 * thread's growth budget (512 KiB) keeps what the limits have beyond
 * max_cached: budget left + growth == 512 KiB.
 *
 * The cache's life (thread_cache.h): a thread starts on the read-only
 * hs_tc_empty; its first malloc, or its first free (that object not
 * cached), gives it a cache of its own; at exit the cache is emptied and
 * the next thread reuses it, while the exiting thread's later calls
 * (pthread key destructors after the allocator's) are served by
 * hs_tc_dead, without caching.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/pagemap.h"
#include "core/size_class.h"
#include "core/thread_cache.h"

#define SIZE 64
#define N 640 /* 10 batches of the 64-byte class */

static void *objs[N];

/* The calling thread's cache, read through a volatile: the compiler takes
 * malloc for a call that writes no memory but the block it returns, and
 * malloc is what sets the pointer (a thread's first malloc). */
static hs_tcache_t *cache(void)
{
	return *(hs_tcache_t *volatile *)&hs_thread.tc;
}

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
	free(malloc(16)); /* this thread's cache is active */
	uint32_t max0 = cache()->lists[cls].max_length;
	assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	/* the producer's objects are of its shard's spans (a shard of its
	 * own: two threads, at least 2 shards): remote frees, which never
	 * enter this thread's list and go back a batch at a time */
	assert_int_not_equal(hs_pm_entry_shard(hs_pagemap_entry(
				     (uintptr_t)objs[0] >> HS_PAGE_SHIFT)),
			     cache()->shard);
	for (int i = 0; i < N; i++) {
		assert_non_null(objs[i]);
		free(objs[i]);
		assert_int_equal(cache()->lists[cls].length, 0);
		assert_int_equal(cache()->remote[cls].n,
				 (uint32_t)(i + 1) % ci->batch);
	}
	assert_int_equal(cache()->lists[cls].max_length, max0);

	/* this thread's mallocs come from its own shard's spans */
	for (uint32_t i = 0; i < ci->batch; i++) {
		objs[i] = malloc(SIZE);
		assert_int_equal(hs_pm_entry_shard(hs_pagemap_entry(
					 (uintptr_t)objs[i] >> HS_PAGE_SHIFT)),
				 cache()->shard);
	}
	for (uint32_t i = 0; i < ci->batch; i++)
		free(objs[i]);
}

/* A thread's first refill of a class takes at most 1 KiB of objects, at
 * least one (carving writes every object it hands out: a whole batch of
 * a 4 KiB class made 64 KiB resident for one malloc); the second at most
 * 2 KiB if the first was cut, else a batch. */
static uint32_t first_len[3], second_len[3];

/* volatile: as in cache() */
static uint32_t list_length(unsigned cls)
{
	return *(volatile uint32_t *)&cache()->lists[cls].length;
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

#define BURST_ROUNDS 40
static uint32_t burst_max[BURST_ROUNDS];
static uint64_t burst_budget_sum;

static void *bursts(void *arg)
{
	unsigned cls = hs_size_to_class(SIZE);
	(void)arg;
	for (int r = 0; r < BURST_ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			objs[i] = malloc(SIZE);
		for (int i = 0; i < N; i++)
			free(objs[i]);
		burst_max[r] = cache()->lists[cls].max_length;
	}
	hs_tcache_t *tc = cache();
	uint64_t grown = 0;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		if (tc->lists[c].max_length > hs_classes[c].max_cached)
			grown += (uint64_t)(tc->lists[c].max_length -
					    hs_classes[c].max_cached) *
				 hs_classes[c].size;
	burst_budget_sum = tc->grow_left + grown;
	return NULL;
}

static void test_burst_list_grows(void **state)
{
	const hs_class_info_t *ci = &hs_classes[hs_size_to_class(SIZE)];
	pthread_t t;

	(void)state;
	assert_true(ci->max_cached < N);
	assert_int_equal(pthread_create(&t, NULL, bursts, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	uint32_t cap = (256 << 10) / SIZE < 4096 ? (256 << 10) / SIZE : 4096;
	for (int r = 0; r < BURST_ROUNDS; r++) {
		assert_true(burst_max[r] <= cap);
		/* batch steps from max_cached (or one batch after a shrink) */
		assert_int_equal(burst_max[r] % ci->batch, 0);
	}
	assert_true(burst_max[BURST_ROUNDS - 1] >= N);
	assert_int_equal(burst_budget_sum, (uint64_t)512 << 10);
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
		size_t cap = 1024 / ci->size ? 1024 / ci->size : 1;
		uint32_t want = ci->batch < cap ? ci->batch : (uint32_t)cap;
		assert_int_equal(first_len[i], want - 1);
		size_t cap2 = 2048 / ci->size ? 2048 / ci->size : 1;
		uint32_t want2 = want == ci->batch  ? ci->batch
				 : ci->batch < cap2 ? ci->batch
						    : (uint32_t)cap2;
		assert_int_equal(second_len[i], want2 - 1);
	}
}

/* What a thread saw of its cache, for the main thread to assert. */
struct life {
	hs_tcache_t *before, *after_first, *after_second;
	uint32_t len_first, len_second;
	size_t size; /* of the objects */
	void *given; /* object to free first (NULL: malloc first) */
};

static void *first_call(void *arg)
{
	struct life *lf = arg;
	unsigned cls = hs_size_to_class(lf->size);

	lf->before = cache();
	if (lf->given) {
		free(lf->given);
		lf->after_first = cache();
		lf->len_first = list_length(cls);
		objs[1] = malloc(lf->size); /* stored: else elided */
		free(objs[1]); /* now cached: the list keeps at least it */
	} else {
		objs[0] = malloc(lf->size);
		lf->after_first = cache();
		lf->len_first = list_length(cls);
		free(objs[0]);
	}
	lf->after_second = cache();
	lf->len_second = list_length(cls);
	return NULL;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
}

static bool cache_is_empty(const hs_tcache_t *tc)
{
	for (unsigned c = 0; c < HS_NUM_CLASSES; c++)
		if (tc->lists[c].head || tc->lists[c].length)
			return false;
	return true;
}

/* First malloc: the thread leaves hs_tc_empty for a cache of its own;
 * at exit its objects go back and the next thread gets the same cache,
 * reset (state, limits, slow-start history: 512-byte objects, whose
 * first refill is 2 objects, 1 KiB, and the next ones more). */
static void test_cache_reused_after_exit(void **state)
{
	unsigned cls = hs_size_to_class(512);
	struct life a = {.size = 512}, b = {.size = 512};

	(void)state;
	assert_true(hs_classes[cls].batch > 2);
	run_thread(first_call, &a);
	assert_ptr_equal(a.before, &hs_tc_empty);
	assert_ptr_not_equal(a.after_first, &hs_tc_empty);
	assert_ptr_not_equal(a.after_first, &hs_tc_dead);
	assert_ptr_equal(a.after_second, a.after_first);
	assert_int_equal(hs_classes[cls].size, 512);
	assert_int_equal(a.len_first, 1);  /* 1 KiB: 2 objects, 1 cached */
	assert_int_equal(a.len_second, 2); /* and the freed one */
	/* a's cache, on the free list now: emptied, not in use */
	assert_int_equal(a.after_first->state, HS_TC_DEAD);
	assert_true(cache_is_empty(a.after_first));

	run_thread(first_call, &b);
	assert_ptr_equal(b.before, &hs_tc_empty);
	assert_ptr_equal(b.after_first, a.after_first); /* reused */
	assert_int_equal(b.len_first, a.len_first);	/* history reset */
	assert_int_equal(b.len_second, a.len_second);
	assert_int_equal(b.after_first->lists[cls].max_length,
			 hs_classes[cls].max_cached);
	assert_true(cache_is_empty(&hs_tc_empty));
	assert_true(cache_is_empty(&hs_tc_dead));
}

/* First call a free: of an object another thread allocated.  It is not
 * cached (it goes to the central list), but the thread gets its cache,
 * and caches its next frees. */
static void test_first_call_free(void **state)
{
	struct life a = {.size = SIZE};

	(void)state;
	a.given = malloc(SIZE);
	assert_non_null(a.given);
	run_thread(first_call, &a);
	assert_ptr_equal(a.before, &hs_tc_empty);
	assert_ptr_not_equal(a.after_first, &hs_tc_empty);
	assert_int_equal(a.len_first, 0);
	assert_ptr_equal(a.after_second, a.after_first);
	assert_true(a.len_second >= 1);
	assert_true(cache_is_empty(&hs_tc_empty));
}

/* A pthread key destructor that runs after the allocator's (keys run in
 * creation order; the allocator's key is made at its init) mallocs and
 * frees on hs_tc_dead. */
static pthread_key_t late_key;
static hs_tcache_t *late_tc[2];
static char *late_block;

static void late_destructor(void *arg)
{
	(void)arg;
	late_tc[0] = cache();
	late_block = malloc(SIZE);
	if (late_block)
		memset(late_block, 0x5a, SIZE);
	objs[1] = malloc(3 * SIZE);
	free(objs[1]);
	late_tc[1] = cache();
}

static void *set_late_key(void *arg)
{
	(void)arg;
	objs[1] = malloc(SIZE); /* the thread has a cache */
	free(objs[1]);
	pthread_setspecific(late_key, &late_key);
	return NULL;
}

static void test_calls_after_exit(void **state)
{
	(void)state;
	assert_int_equal(pthread_key_create(&late_key, late_destructor), 0);
	run_thread(set_late_key, NULL);
	assert_ptr_equal(late_tc[0], &hs_tc_dead);
	assert_ptr_equal(late_tc[1], &hs_tc_dead);
	assert_non_null(late_block);
	for (int i = 0; i < SIZE; i++)
		assert_int_equal((unsigned char)late_block[i], 0x5a);
	free(late_block);
	assert_true(cache_is_empty(&hs_tc_dead));
	pthread_key_delete(late_key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_only_list),
		cmocka_unit_test(test_first_refill_small),
		cmocka_unit_test(test_burst_list_grows),
		cmocka_unit_test(test_cache_reused_after_exit),
		cmocka_unit_test(test_first_call_free),
		cmocka_unit_test(test_calls_after_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
