// SPDX-License-Identifier: MIT
/*
 * compat_target.c - an "other allocator" for the compatible-probe test: it
 * fires otel_memory:alloc/free and ddheap:alloc/free itself (<sys/sdt.h>,
 * each behind its own semaphore, arguments wherever the compiler puts
 * them) around glibc's malloc, with known pointers, sizes and weights from
 * known functions (built with frame pointers, so the collector's
 * bpf_get_stack walk reaches main):
 *   compat_hold_a  100 blocks, size 1000 + i, weight 1000003 + 17 i: live
 *   compat_hold_b  50 blocks, size 5000, weight 65536 (i + 1): live
 *   compat_churn   300 blocks fired and freed again: nothing live
 * Before the collector attaches it allocates 20 blocks ("early", no probe
 * fires while the semaphores are 0) and frees them after: those frees are
 * of allocations the collector never saw.
 * Protocol: waits (up to 60 s) until some alloc semaphore is set, sleeps
 * 0.2 s more (so a collector attaches both probes), runs, prints
 * "ready PID A B EARLY" (the live weight sums of compat_hold_a and
 * compat_hold_b, the early frees), then sleeps until killed.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Hidden: the notes carry the addresses; nothing else must bind to them. */
#define SEMAPHORE                                                          \
	__attribute__((section(".probes"), visibility("hidden"), used))
volatile unsigned short otel_memory_alloc_semaphore SEMAPHORE;
volatile unsigned short otel_memory_free_semaphore SEMAPHORE;
volatile unsigned short ddheap_alloc_semaphore SEMAPHORE;
volatile unsigned short ddheap_free_semaphore SEMAPHORE;

#define N_A 100
#define N_B 50
#define N_CHURN 300
#define N_EARLY 20

static void *blocks_a[N_A], *blocks_b[N_B], *early[N_EARLY];

__attribute__((noinline)) static void fire_alloc(void *p, uint64_t size,
						 uint64_t weight)
{
	if (otel_memory_alloc_semaphore)
		STAP_PROBE3(otel_memory, alloc, p, size, weight);
	if (ddheap_alloc_semaphore)
		STAP_PROBE3(ddheap, alloc, p, size, weight);
}

__attribute__((noinline)) static void fire_free(void *p)
{
	if (otel_memory_free_semaphore)
		STAP_PROBE1(otel_memory, free, p);
	if (ddheap_free_semaphore)
		STAP_PROBE1(ddheap, free, p);
}

static void *sampled_malloc(size_t size, uint64_t weight)
{
	void *p = malloc(size);

	if (!p)
		abort();
	memset(p, 1, size);
	fire_alloc(p, size, weight);
	return p;
}

static void sampled_free(void *p)
{
	fire_free(p); /* before the memory can be reused */
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

int main(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	uint64_t a, b;

	for (int i = 0; i < N_EARLY; i++)
		early[i] = sampled_malloc(100, 123456); /* no probe fires yet */
	for (int i = 0; i < 6000 && !otel_memory_alloc_semaphore &&
			!ddheap_alloc_semaphore;
	     i++)
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
	for (;;)
		pause();
}
