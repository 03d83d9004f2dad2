/* SPDX-License-Identifier: MIT */
/*
 * tests/test_central.c - the central free lists (core/central_freelist.c)
 * and their lock (core/spinlock.h).
 *
 * - The spinlock excludes: threads adding to a plain counter under it
 *   lose no increment (the total is threads x iterations), with more
 *   threads than CPUs so the spin-then-yield path runs.
 * - Objects taken from the central list and given back in any order
 *   (runs of one span, spans interleaved, chains of every length) go back
 *   to their spans: the lists stay valid (hs_central_is_valid), every
 *   object of a span handed out is distinct and inside its span, and once
 *   all are back every span the test made is returned to the page heap
 *   (small_span_bytes back to its value before).
 * - A refill carves in address order: objects of a fresh span come out
 *   ascending, one object size apart.
 * - A refill takes a span's free list whole (no walk) when it holds at
 *   most the objects asked for, by its kept tail: the chain is the runs
 *   given back, last given first, then the objects carved next; a
 *   shorter request takes the list's first objects and leaves the rest.
 * Linked with libheapscope.a, sampling off.  The classes used (2 KiB;
 * 1664 bytes for the whole-list case) have no transfer cache
 * (TC_MAX_SIZE 1024) and no other user in this program.
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
#include "core/size_class.h"
#include "core/spinlock.h"
#include "core/init.h"

#define THREADS 6
#define ITERS 100000

static hs_spinlock_t lock = HS_SPINLOCK_INIT;
static uint64_t counter; /* plain: only the lock protects it */

static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		hs_spin_lock(&lock);
		uint64_t v = counter;
		__asm__ __volatile__("" ::: "memory"); /* widen the window */
		counter = v + 1;
		hs_spin_unlock(&lock);
	}
	return NULL;
}

static void test_spinlock_excludes(void **state)
{
	pthread_t t[THREADS];
	(void)state;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, adder, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(counter, (uint64_t)THREADS * ITERS);
	assert_int_equal(lock.held, 0);
}

#define SIZE 2048
#define MAXOBJ 4096

static void *objs[MAXOBJ];

/* xorshift64: fixed seed, repeatable orders */
static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* Takes n objects of cls from shard 0 in requests of `per` at most. */
static void take(unsigned cls, int n, int per)
{
	int got = 0;
	while (got < n) {
		void *head, *tail;
		int want = n - got < per ? n - got : per;
		int k = hs_central_remove_range(cls, 0, &head, &tail, want);
		assert_true(k >= 1 && k <= want);
		void *o = head;
		for (int i = 0; i < k; i++) {
			objs[got++] = o;
			if (i + 1 < k)
				o = *(void **)o;
		}
		assert_ptr_equal(o, tail);
	}
}

/* Gives objs[0..n) back as chains of 1..maxlen objects, in array order. */
static void give(unsigned cls, int n, int maxlen)
{
	int i = 0;
	while (i < n) {
		int len = 1 + (int)(next_rand() % (uint64_t)maxlen);
		if (len > n - i)
			len = n - i;
		for (int k = 0; k + 1 < len; k++)
			*(void **)objs[i + k] = objs[i + k + 1];
		hs_central_insert_range(cls, objs[i], objs[i + len - 1], len);
		i += len;
	}
}

static void check_distinct(unsigned cls, int n)
{
	void *sorted[MAXOBJ];
	memcpy(sorted, objs, (size_t)n * sizeof(void *));
	qsort(sorted, (size_t)n, sizeof(void *), cmp_ptr);
	for (int i = 1; i < n; i++)
		assert_true((uintptr_t)sorted[i] - (uintptr_t)sorted[i - 1] >=
			    hs_classes[cls].size);
}

static void test_round_trips(void **state)
{
	(void)state;
	assert_true(hs_init_global());
	unsigned cls = hs_size_to_class(SIZE);
	const hs_class_info_t *ci = &hs_classes[cls];
	int n = (int)ci->objects * 5 + 3; /* 6 spans, the last partly used */
	assert_true(n <= MAXOBJ);
	int64_t spans0 = hs_stat_get(HS_STAT_small_span_bytes);

	for (int round = 0; round < 4; round++) {
		take(cls, n, round == 0 ? (int)ci->batch : 1 + round * 3);
		check_distinct(cls, n);
		assert_true(hs_stat_get(HS_STAT_small_span_bytes) > spans0);
		assert_int_equal(hs_central_is_valid(), 1);
		if (round == 1) {
			/* interleave spans: shuffle */
			for (int i = n - 1; i > 0; i--) {
				int j = (int)(next_rand() % (uint64_t)(i + 1));
				void *t = objs[i];
				objs[i] = objs[j];
				objs[j] = t;
			}
		} else if (round == 2) {
			/* reversed: runs of one span, descending */
			for (int i = 0; i < n / 2; i++) {
				void *t = objs[i];
				objs[i] = objs[n - 1 - i];
				objs[n - 1 - i] = t;
			}
		}
		/* half back, check, the other half back */
		give(cls, n / 2, round == 3 ? 1 : 70);
		assert_int_equal(hs_central_is_valid(), 1);
		for (int i = n / 2; i < n; i++)
			objs[i - n / 2] = objs[i];
		give(cls, n - n / 2, 70);
		assert_int_equal(hs_central_is_valid(), 1);
		/* every span made for this class is back in the page heap,
		 * once the empty ones the shard keeps are given back */
		int64_t span = (int64_t)ci->pages << HS_PAGE_SHIFT;
		int64_t keep =
			span > (64 << 10) ? span : (64 << 10) / span * span;
		assert_true(hs_stat_get(HS_STAT_small_span_bytes) - spans0 <=
			    keep);
		hs_central_drain();
		assert_int_equal(hs_central_is_valid(), 1);
		assert_int_equal(hs_stat_get(HS_STAT_small_span_bytes), spans0);
	}
}

static void test_carve_ascending(void **state)
{
	(void)state;
	assert_true(hs_init_global());
	unsigned cls = hs_size_to_class(SIZE);
	const hs_class_info_t *ci = &hs_classes[cls];
	int n = (int)ci->objects; /* one fresh span (all back after the
				   * test above) */
	take(cls, n, n);
	for (int i = 1; i < n; i++)
		assert_int_equal((uintptr_t)objs[i] - (uintptr_t)objs[i - 1],
				 ci->size);
	give(cls, n, 9);
	assert_int_equal(hs_central_is_valid(), 1);
}

/* Takes one request of want objects of cls from shard 0 into out[]; the
 * count, and the chain's tail, checked. */
static int take_one(unsigned cls, int want, void **out)
{
	void *head, *tail;
	int k = hs_central_remove_range(cls, 0, &head, &tail, want);
	void *o = head;
	for (int i = 0; i < k; i++) {
		out[i] = o;
		if (i + 1 < k)
			o = *(void **)o;
	}
	assert_ptr_equal(o, tail);
	return k;
}

/* Gives objs[from..to] back as one run. */
static void give_run(unsigned cls, int from, int to)
{
	for (int i = from; i < to; i++)
		*(void **)objs[i] = objs[i + 1];
	hs_central_insert_range(cls, objs[from], objs[to], to - from + 1);
}

/* A class with no transfer cache either (over 1 KiB) whose span holds
 * enough objects to be half carved (1664 bytes: 34 in 7 pages). */
#define WHOLE_SIZE 1664

static void test_whole_list(void **state)
{
	(void)state;
	assert_true(hs_init_global());
	hs_central_drain(); /* no kept span: the next take makes one */
	unsigned cls = hs_size_to_class(WHOLE_SIZE);
	const hs_class_info_t *ci = &hs_classes[cls];
	int m = (int)ci->objects / 2; /* carved; the rest left to carve */
	assert_true(m >= 10 && ci->size > 1024);
	take(cls, m, m);
	for (int i = 1; i < m; i++) /* one fresh span, objs[0] its start */
		assert_int_equal((uintptr_t)objs[i] - (uintptr_t)objs[0],
				 (uintptr_t)i * ci->size);
	give_run(cls, 1, 3);
	give_run(cls, 5, 6);
	/* the free list: 5 6 1 2 3; asked 7: all 5 with no walk, and the
	 * two objects carved next in front of them */
	void *got[16];
	assert_int_equal(take_one(cls, 7, got), 7);
	char *carve = (char *)objs[0] + (size_t)m * ci->size;
	void *want[7] = {carve,	  carve + ci->size, objs[5], objs[6],
			 objs[1], objs[2],	    objs[3]};
	for (int i = 0; i < 7; i++)
		assert_ptr_equal(got[i], want[i]);
	assert_int_equal(hs_central_is_valid(), 1);
	/* a request shorter than the list: its first objects, the rest
	 * stays listed with its tail */
	give_run(cls, 1, 4); /* 1 2 3 4 */
	assert_int_equal(take_one(cls, 2, got), 2);
	assert_ptr_equal(got[0], objs[1]);
	assert_ptr_equal(got[1], objs[2]);
	assert_int_equal(hs_central_is_valid(), 1);
	give_run(cls, 8, 9); /* 8 9 3 4 */
	assert_int_equal(take_one(cls, 4, got), 4);
	void *want2[4] = {objs[8], objs[9], objs[3], objs[4]};
	for (int i = 0; i < 4; i++)
		assert_ptr_equal(got[i], want2[i]);
	assert_int_equal(hs_central_is_valid(), 1);
	/* all back: objs[] holds each object out once */
	int n = 0;
	void *out[MAXOBJ];
	for (int i = 0; i < m; i++)
		if (i != 5 && i != 6 && (i < 1 || i > 4) && i != 8 && i != 9)
			out[n++] = objs[i];
	out[n++] = carve;
	out[n++] = carve + ci->size;
	out[n++] = objs[5];
	out[n++] = objs[6];
	out[n++] = objs[1];
	out[n++] = objs[2];
	out[n++] = objs[3];
	out[n++] = objs[4];
	out[n++] = objs[8];
	out[n++] = objs[9];
	memcpy(objs, out, (size_t)n * sizeof(void *));
	check_distinct(cls, n);
	assert_int_equal(n, m + 2);
	give(cls, n, 5);
	assert_int_equal(hs_central_is_valid(), 1);
	hs_central_drain();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spinlock_excludes),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_carve_ascending),
		cmocka_unit_test(test_whole_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
