// SPDX-License-Identifier: MIT
/*
 * leak_target.c - the leak-trend tests' target (tests/test_leaks.sh): three
 * allocation sites, each its own function,
 *   stable_site  64 MiB allocated once, at the start, and kept;
 *   ring_site    a FIFO ring of 512 blocks of 64 KiB (32 MiB), filled at
 *                the start, then 13 blocks freed and reallocated every
 *                50 ms (16.25 MiB/s: each block lives ~2 s);
 *   leak_site    one 64 KiB block every 50 ms, never freed (1.25 MiB/s),
 *                from "ready" on.
 * Prints "ready PID" once the stable block and the ring are in place, and
 * exits after MAX seconds (argument 1, default 120) so a forgotten target
 * cannot grow for ever.  Nothing is touched: the blocks cost address
 * space, not memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (64 * 1024)
#define RING 512
#define RING_STEP 13
#define TICK_NS 50000000L
#define MAX_LEAKS 20 * 600

static void *ring[RING];
static void *leaked[MAX_LEAKS];
static void *stable;

__attribute__((noinline)) void *stable_site(void)
{
	return malloc(64 << 20);
}

__attribute__((noinline)) void *ring_site(void)
{
	return malloc(BLOCK);
}

__attribute__((noinline)) void *leak_site(void)
{
	return malloc(BLOCK);
}

int main(int argc, char **argv)
{
	long max_s = argc > 1 ? atol(argv[1]) : 120;
	struct timespec next;
	size_t head = 0, nleaks = 0;

	if (max_s <= 0 || max_s > 600)
		max_s = 120;
	stable = stable_site();
	for (int i = 0; i < RING; i++)
		ring[i] = ring_site();
	if (!stable || !ring[RING - 1])
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long tick = 0; tick < max_s * 20; tick++) {
		for (int i = 0; i < RING_STEP; i++) {
			free(ring[head]);
			ring[head] = ring_site();
			head = (head + 1) % RING;
		}
		if (nleaks < MAX_LEAKS)
			leaked[nleaks++] = leak_site();
		next.tv_nsec += TICK_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	printf("done %zu leaked\n", nleaks);
	return 0;
}
