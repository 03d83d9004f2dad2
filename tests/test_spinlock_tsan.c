/* SPDX-License-Identifier: MIT */
/*
 * tests/test_spinlock_tsan.c - core/spinlock.h under ThreadSanitizer: four
 * threads add to a plain counter under the lock.  Built with
 * -fsanitize=thread and run with halt_on_error: a lock without acquire
 * on lock and release on unlock makes TSan report a data race on the
 * counter (exit 66); a lock that does not exclude loses increments
 * (exit 1).  Only the lock is built in: TSan brings its own malloc.
 */
#include <pthread.h>
#include <stdio.h>

#include "core/spinlock.h"

#define THREADS 4
#define ITERS 100000

static hs_spinlock_t lock = HS_SPINLOCK_INIT;
static unsigned long counter;

static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		hs_spin_lock(&lock);
		counter++;
		hs_spin_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, adder, NULL))
			return 2;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (counter != (unsigned long)THREADS * ITERS) {
		fprintf(stderr, "counter %lu, want %lu\n", counter,
			(unsigned long)THREADS * ITERS);
		return 1;
	}
	return 0;
}
