// SPDX-License-Identifier: MIT
/*
 * tests/test_region_lock.c - the region lock (allocator/region/lock.c,
 * compiled into the test): mutual exclusion on every path it has (the
 * free word's compare-and-swap, the spin, the yields, the futex sleep
 * and wake), counted exactly.
 *
 * THREADS threads each enter the lock ROUNDS times and, inside, check
 * that nobody else is inside, bump a plain counter and leave; every
 * HOLD_EVERY-th entry of a thread holds the lock for HOLD_US
 * microseconds, far past the spin and yield phases, so waiters go to
 * sleep in futex and the unlock has to wake them.  A lost wake-up hangs
 * the test (ctest's timeout); a broken exclusion shows as a second
 * thread inside or a counter short of THREADS * ROUNDS.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "region/lock.h"

#define THREADS 6
#define ROUNDS 20000
#define HOLD_EVERY 2000
#define HOLD_US 2000

static hs_word_lock_t lock = HS_WORD_LOCK_INIT;
static uint64_t counter; /* plain: only touched under the lock */
static int inside;
static int overlaps;

static void *run(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		hs_word_lock(&lock);
		if (__atomic_fetch_add(&inside, 1, __ATOMIC_RELAXED) != 0)
			__atomic_fetch_add(&overlaps, 1, __ATOMIC_RELAXED);
		counter++;
		if (i % HOLD_EVERY == HOLD_EVERY - 1) {
			struct timespec ts = {0, HOLD_US * 1000L};

			nanosleep(&ts, NULL);
		}
		__atomic_fetch_sub(&inside, 1, __ATOMIC_RELAXED);
		hs_word_unlock(&lock);
	}
	return NULL;
}

static void test_exclusion(void **state)
{
	pthread_t t[THREADS];

	(void)state;
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, run, NULL), 0);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(overlaps, 0);
	assert_int_equal(counter, (uint64_t)THREADS * ROUNDS);
	/* left free: a last waiter's state 2 was cleared by its unlock */
	assert_int_equal(lock.state, 0);
}

/* The fork child's reset gives a free lock whatever state it had. */
static void test_init(void **state)
{
	hs_word_lock_t l = HS_WORD_LOCK_INIT;

	(void)state;
	hs_word_lock(&l);
	assert_int_equal(l.state, 1);
	l.state = 2; /* as if someone slept on it */
	hs_word_lock_init(&l);
	assert_int_equal(l.state, 0);
	hs_word_lock(&l);
	hs_word_unlock(&l);
	assert_int_equal(l.state, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
