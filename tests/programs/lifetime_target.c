// SPDX-License-Identifier: MIT
/*
 * lifetime_target.c - target of test_lifetime.sh (allocs, lifetime and
 * peak profiles).  Run preloaded with libheapscope.so at
 * HEAPSCOPE_SAMPLE_RATE=1.  Waits (up to 20 s) for a collector, then 1 s
 * more (so several collectors can attach), then:
 *   peak_blocks:  32 x 1 MiB live together for 300 ms, then freed
 *   short_lived:  300 x malloc(1000), each freed after 1 ms (spin) } two
 *   long_lived:    20 x malloc(1000), each freed after 100 ms } threads
 * prints the measured mean lifetimes (ns, inner and outer bounds of what
 * the probes see), "done PID" and sleeps until killed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PEAK_N 32
#define PEAK_SZ (1 << 20)

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts))
		;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* nanosleep(1 ms) takes 1.2 ms or more on a loaded VM: spin instead. */
static void spin_ns(long long ns)
{
	long long end = now_ns() + ns;

	while (now_ns() < end)
		;
}

/* Summed measured lifetimes, ns: inner = from malloc's return to the call
 * of free, outer = from the call of malloc to free's return.  The probes
 * fire inside malloc and free, so what a collector sees lies between. */
static long long in_short, in_long, out_short, out_long;

__attribute__((noinline)) void peak_blocks(void)
{
	static char *b[PEAK_N];

	for (int i = 0; i < PEAK_N; i++) {
		b[i] = malloc(PEAK_SZ);
		memset(b[i], i, PEAK_SZ);
	}
	sleep_ms(300);
	for (int i = 0; i < PEAK_N; i++)
		free(b[i]);
}

__attribute__((noinline)) void *short_lived(void *arg)
{
	(void)arg;
	for (int i = 0; i < 300; i++) {
		long long ta = now_ns();
		char *volatile p = malloc(1000);
		long long t0 = now_ns();

		memset(p, 1, 1000);
		spin_ns(1000000);
		in_short += now_ns() - t0;
		free(p);
		out_short += now_ns() - ta;
	}
	return NULL;
}

__attribute__((noinline)) void *long_lived(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++) {
		long long ta = now_ns();
		char *volatile p = malloc(1000);
		long long t0 = now_ns();

		memset(p, 2, 1000);
		sleep_ms(100);
		in_long += now_ns() - t0;
		free(p);
		out_long += now_ns() - ta;
	}
	return NULL;
}

int main(void)
{
	int (*attached)(void) =
		(int (*)(void))dlsym(RTLD_DEFAULT, "heapscope_collector_attached");
	pthread_t a, b;

	for (int i = 0; attached && i < 2000 && !attached(); i++)
		sleep_ms(10);
	sleep_ms(1000);
	peak_blocks();
	pthread_create(&a, NULL, short_lived, NULL);
	pthread_create(&b, NULL, long_lived, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("measured short_lived %lld %lld long_lived %lld %lld\n",
	       in_short / 300, out_short / 300, in_long / 20, out_long / 20);
	printf("done %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
