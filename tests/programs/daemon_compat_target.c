// SPDX-License-Identifier: MIT
/*
 * daemon_compat_target.c - an "other allocator" whose probes live in a
 * shared library (libcompat_fire.so, otel_memory:alloc/free), for the
 * daemon's compatible-probe test.  Around glibc's malloc, from known
 * functions (frame pointers, so the BPF stack walk reaches main):
 *   compat_hold_a  100 blocks, size 1000 + i, weight 1000003 + 17 i: live
 *   compat_hold_b  50 blocks, size 5000, weight 65536 (i + 1): live
 *   compat_churn   300 blocks fired and freed again: nothing live
 * plus EARLY = 20 frees fired for blocks whose allocation was never fired
 * (as for allocations before a collector attached): the collector must
 * count and ignore them.
 * Protocol: waits (up to 60 s) until both semaphores are set, sleeps
 * 0.2 s more, runs, prints "ready PID A B EARLY" (the live weight sums of
 * compat_hold_a and compat_hold_b), then sleeps; each SIGUSR1 runs
 * compat_churn once more and prints "churned N" (N = runs so far).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compat_fire.h"

#define N_A 100
#define N_B 50
#define N_CHURN 300
#define N_EARLY 20

static void *blocks_a[N_A], *blocks_b[N_B];
static volatile sig_atomic_t churn_requested;

static void *sampled_malloc(size_t size, uint64_t weight)
{
	void *p = malloc(size);

	if (!p)
		abort();
	memset(p, 1, size);
	compat_fire_alloc(p, size, weight);
	return p;
}

static void sampled_free(void *p)
{
	compat_fire_free(p); /* before the memory can be reused */
	free(p);
}

__attribute__((noinline)) uint64_t compat_hold_a(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < N_A; i++) {
		uint64_t w = 1000003u + 17u * (uint64_t)i;

		blocks_a[i] = sampled_malloc(1000 + (size_t)i, w);
		sum += w;
	}
	return sum;
}

__attribute__((noinline)) uint64_t compat_hold_b(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < N_B; i++) {
		uint64_t w = 65536u * (uint64_t)(i + 1);

		blocks_b[i] = sampled_malloc(5000, w);
		sum += w;
	}
	return sum;
}

__attribute__((noinline)) void compat_churn(void)
{
	for (int i = 0; i < N_CHURN; i++)
		sampled_free(sampled_malloc(64 + (size_t)i, 7777777u));
}

static void on_usr1(int sig)
{
	(void)sig;
	churn_requested = 1;
}

int main(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	struct sigaction sa;
	void *early[N_EARLY];
	sigset_t block, old;
	uint64_t a, b;
	int runs = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);

	for (int i = 0; i < N_EARLY; i++) {
		early[i] = malloc(100); /* allocation never fired */
		if (!early[i])
			abort();
	}
	for (int i = 0; i < 6000 && !compat_fire_armed(); i++)
		nanosleep(&ts, NULL);
	ts.tv_nsec = 200 * 1000 * 1000;
	nanosleep(&ts, NULL);
	a = compat_hold_a();
	compat_churn();
	b = compat_hold_b();
	for (int i = 0; i < N_EARLY; i++)
		sampled_free(early[i]);
	printf("ready %d %" PRIu64 " %" PRIu64 " %d\n", (int)getpid(), a, b,
	       N_EARLY);
	fflush(stdout);
	for (;;) {
		while (!churn_requested)
			sigsuspend(&old);
		churn_requested = 0;
		compat_churn();
		printf("churned %d\n", ++runs);
		fflush(stdout);
	}
}
