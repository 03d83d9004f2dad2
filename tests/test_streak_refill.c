/* SPDX-License-Identifier: MIT */
/*
 * tests/test_streak_refill.c - refills in an allocation streak
 * (core/thread_cache.c, hs_tc_refill), the list limit in a free streak
 * (hs_tc_overflow) and transfer-cache batches taken several at once
 * (core/central_freelist.c, hs_central_remove_range).
 *
 * - A thread that only allocates a class (a tree being built: 8192
 *   objects of 64 bytes, none freed) refills it in takes that grow: the
 *   first at most 1 KiB (the slow start), every later take a whole
 *   number of batches (64-byte objects: the slow start's caps are), at most
 *   half the list's limit before the refill (or one batch), at most 8
 *   batches and 32 KiB; the takes reach 8 batches, and the 8192 objects
 *   need at most 48 refills (one batch a refill: 256).
 * - An overflow ends the streak: the next refill takes one batch.
 * - A free streak (16384 objects of 48 bytes freed by the thread that
 *   allocated them): once the transfer cache is full the overflows give
 *   the whole list to the spans, and the list's limit climbs back to a
 *   streak's refill (8 batches, at most 32 KiB), so the trips carry up
 *   to that many objects, not one batch.
 * - Three batches given back to the transfer cache come out of one
 *   request for three batches as one chain (the same objects, linked
 *   head to tail), and a request for 2 batches + 1 object takes 2 whole
 *   batches; central_free_bytes moves by exactly the objects taken.
 * Linked with libheapscope.a, sampling off.  The central part uses the
 * 1000-byte class, which nothing else in this program allocates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/init.h"
#include "core/size_class.h"
#include "core/thread_cache.h"

#define SIZE 64
#define N 8192 /* past the list cap (4096 objects): frees overflow */
#define MAXREFILLS 256

/* N, and room for the mallocs that empty the list after the overflow
 * (at most the list cap, 4096 objects, and the refill) */
#define NOBJS (N + 4096 + 1)
static void *objs[NOBJS];
static uint32_t takes[MAXREFILLS], max_before[MAXREFILLS];
static int nrefills;
static uint32_t after_overflow_take;

/* volatile reads: the compiler takes malloc for a call that writes no
 * memory but the block it returns */
static hs_tcache_t *cache(void)
{
	return *(hs_tcache_t *volatile *)&hs_thread.tc;
}

static hs_tc_list_t *list(unsigned cls)
{
	return &cache()->lists[cls];
}

static uint32_t vload(const uint32_t *p)
{
	return *(const volatile uint32_t *)p;
}

static void *builder(void *arg)
{
	unsigned cls = hs_size_to_class(SIZE);
	(void)arg;
	free(malloc(16)); /* the thread's cache is active */
	for (int i = 0; i < N; i++) {
		/* the list is empty before the malloc: this one refills */
		bool refill = vload(&list(cls)->length) == 0;
		uint32_t max = vload(&list(cls)->max_length);
		objs[i] = malloc(SIZE);
		if (refill && nrefills < MAXREFILLS) {
			max_before[nrefills] = max;
			takes[nrefills++] = vload(&list(cls)->length) + 1;
		}
	}
	/* frees until one overflows (no refill since the last): then the
	 * list is emptied by mallocs, and that refill is not a streak's */
	int i = N;
	uint32_t len;
	do {
		len = vload(&list(cls)->length);
		free(objs[--i]);
	} while (vload(&list(cls)->length) == len + 1 && i > 0);
	assert_true(i > 0);
	assert_true(i + vload(&list(cls)->length) + 1 <= NOBJS);
	while (vload(&list(cls)->length))
		objs[i++] = malloc(SIZE);
	objs[i++] = malloc(SIZE);
	after_overflow_take = vload(&list(cls)->length) + 1;
	while (i > 0)
		free(objs[--i]);
	return NULL;
}

static void test_streak_takes_grow(void **state)
{
	const hs_class_info_t *ci = &hs_classes[hs_size_to_class(SIZE)];
	pthread_t t;

	(void)state;
	assert_int_equal(ci->size, SIZE);
	assert_true(ci->max_cached >= 2 * ci->batch);
	assert_int_equal(pthread_create(&t, NULL, builder, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);

	assert_true(nrefills > 2);
	uint32_t first = ci->batch < 1024 / SIZE ? ci->batch : 1024 / SIZE;
	assert_int_equal(takes[0], first);
	uint32_t most = 0;
	for (int r = 1; r < nrefills; r++) {
		assert_int_equal(takes[r] % ci->batch, 0);
		assert_true(takes[r] == ci->batch ||
			    takes[r] <= max_before[r] / 2);
		assert_true(takes[r] <= 8u * ci->batch);
		assert_true((size_t)takes[r] * SIZE <= 32u << 10);
		if (takes[r] > most)
			most = takes[r];
	}
	/* 64-byte objects: 8 batches are 16 KiB, under 32 KiB */
	assert_int_equal(most, 8u * ci->batch);
	assert_true(nrefills <= 48);
	assert_int_equal(after_overflow_take, ci->batch);
	assert_int_equal(hs_central_is_valid(), 1);
}

/* A free streak: a thread frees FS_N objects of FS_SIZE it allocated;
 * the overflows that find the transfer cache full give the whole list
 * to the spans, and from then on the list's limit moves toward a
 * streak's refill (8 batches, 32 KiB), not down to one batch. */
#define FS_SIZE 48
#define FS_N 16384
static void *fs_objs[FS_N];
static uint32_t fs_whole, fs_max_end, fs_max_after_whole_low;

static void *free_streak(void *arg)
{
	unsigned cls = hs_size_to_class(FS_SIZE);
	(void)arg;
	for (int i = 0; i < FS_N; i++)
		fs_objs[i] = malloc(FS_SIZE);
	fs_max_after_whole_low = UINT32_MAX;
	for (int i = 0; i < FS_N; i++) {
		uint32_t len = vload(&list(cls)->length);
		free(fs_objs[i]);
		uint32_t now = vload(&list(cls)->length);
		if (now == 0 && len > 0) {
			/* an overflow that gave the whole list back */
			fs_whole++;
			uint32_t m = vload(&list(cls)->max_length);
			if (m < fs_max_after_whole_low)
				fs_max_after_whole_low = m;
		}
	}
	fs_max_end = vload(&list(cls)->max_length);
	return NULL;
}

static void test_free_streak_limit(void **state)
{
	const hs_class_info_t *ci = &hs_classes[hs_size_to_class(FS_SIZE)];
	pthread_t t;

	(void)state;
	assert_int_equal(ci->size, FS_SIZE);
	/* a streak's refill: 8 batches, at most 32 KiB, whole batches */
	uint32_t w = (32u << 10) / FS_SIZE;
	w -= w % ci->batch;
	if (w > 8u * ci->batch)
		w = 8u * ci->batch;
	assert_true(w > ci->batch);
	assert_int_equal(pthread_create(&t, NULL, free_streak, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(fs_whole > 0);
	/* never below one batch, and back up to w by the end */
	assert_true(fs_max_after_whole_low >= ci->batch);
	assert_int_equal(fs_max_end, w);
	/* the frees after the transfer cache filled (at most FS_N objects)
	 * went in trips of up to w objects, not one batch each (measured:
	 * 51 trips; 370 with the limit at one batch) */
	assert_true(fs_whole <= FS_N / w + 8 + 16);
	assert_int_equal(hs_central_is_valid(), 1);
}

/* Walks the chain head..tail of n objects: 1 if it ends at tail, and
 * every object is one of want[0..n) (each once). */
static int chain_is(void *head, void *tail, void **want, int n)
{
	void *o = head;
	for (int k = 0; k < n; k++) {
		int found = 0;
		for (int j = 0; j < n; j++) {
			if (want[j] == o) {
				want[j] = NULL; /* each once */
				found = 1;
				break;
			}
		}
		if (!found)
			return 0;
		if (k == n - 1)
			return o == tail;
		o = *(void **)o;
	}
	return 0;
}

static void test_tc_batches_at_once(void **state)
{
	(void)state;
	assert_true(hs_init_global());
	unsigned cls = hs_size_to_class(1000);
	const hs_class_info_t *ci = &hs_classes[cls];
	const int b = ci->batch;
	void *h[3], *t[3];
	void **mine = calloc(3 * (size_t)b, sizeof(void *));
	void **copy = calloc(3 * (size_t)b, sizeof(void *));
	assert_non_null(mine);
	assert_non_null(copy);

	for (int k = 0; k < 3; k++) {
		assert_int_equal(
			hs_central_remove_range(cls, 0, &h[k], &t[k], b), b);
		void *o = h[k];
		for (int j = 0; j < b; j++, o = *(void **)o) {
			mine[k * b + j] = o;
			if (j == b - 1)
				assert_ptr_equal(o, t[k]);
		}
	}
	for (int k = 0; k < 3; k++)
		hs_central_insert_range(cls, h[k], t[k], b);
	size_t bytes;
	assert_non_null(hs_central_tc_slots(0, cls, &bytes));
	assert_true(bytes >= 3 * 2 * sizeof(void *)); /* room for 3 */

	/* 3 batches in one request: the three given back, one chain */
	int64_t f0 = hs_stat_get(HS_STAT_central_free_bytes);
	void *head, *tail;
	assert_int_equal(hs_central_remove_range(cls, 0, &head, &tail, 3 * b),
			 3 * b);
	assert_int_equal(hs_stat_get(HS_STAT_central_free_bytes) - f0,
			 -(int64_t)3 * b * (int64_t)ci->size);
	memcpy(copy, mine, 3 * (size_t)b * sizeof(void *));
	assert_int_equal(chain_is(head, tail, copy, 3 * b), 1);

	/* back as 3 batches (head..tail was linked batch after batch) */
	void *o = head;
	for (int k = 0; k < 3; k++) {
		void *bh = o, *bt = o;
		for (int j = 1; j < b; j++)
			bt = *(void **)bt;
		o = *(void **)bt;
		hs_central_insert_range(cls, bh, bt, b);
	}
	/* 2 batches + 1: whole batches only */
	f0 = hs_stat_get(HS_STAT_central_free_bytes);
	assert_int_equal(
		hs_central_remove_range(cls, 0, &head, &tail, 2 * b + 1),
		2 * b);
	assert_int_equal(hs_stat_get(HS_STAT_central_free_bytes) - f0,
			 -(int64_t)2 * b * (int64_t)ci->size);
	hs_central_insert_chain(cls, head, 2 * b);
	assert_int_equal(hs_central_is_valid(), 1);
	free(mine);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streak_takes_grow),
		cmocka_unit_test(test_tc_batches_at_once),
		cmocka_unit_test(test_free_streak_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
