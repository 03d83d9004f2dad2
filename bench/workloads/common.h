// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the workloads: command line (-t threads, -s scale), a
 * fast deterministic PRNG, a sink the compiler cannot remove, threads.
 *
 * Every workload does a fixed amount of work per thread times the scale
 * (-s 1.0 is the full suite, --quick uses less), so wall time measures the
 * allocator, not a time-boxed loop. Seeds are fixed: runs are repeatable.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct bench_args {
	int threads; /* -t: worker threads (or pairs, as each workload says) */
	double scale; /* -s: multiplies the work per thread */
};

static inline void bench_parse(int argc, char **argv, struct bench_args *a)
{
	int c;

	a->threads = 1;
	a->scale = 1.0;
	while ((c = getopt(argc, argv, "t:s:")) != -1) {
		switch (c) {
		case 't':
			a->threads = atoi(optarg);
			break;
		case 's':
			a->scale = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-t threads] [-s scale]\n", argv[0]);
			exit(2);
		}
	}
	if (a->threads < 1)
		a->threads = 1;
	if (a->scale <= 0)
		a->scale = 1.0;
}

/* Work count scaled, never below 1. */
static inline uint64_t bench_n(uint64_t full, double scale)
{
	uint64_t n = (uint64_t)(full * scale);

	return n ? n : 1;
}

/* xorshift64*: fast, good enough for picking sizes and slots. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t rng_seed(unsigned id)
{
	return 0x9E3779B97F4A7C15ULL * (id + 1) | 1;
}

/* Keeps pointers and values alive so no allocation is optimised away. */
static volatile uint64_t bench_sink;

static inline void bench_use(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* Run fn(i) on n threads and join them. */
static inline void bench_run_threads(int n, void *(*fn)(void *), void *args,
				     size_t arg_size)
{
	pthread_t *t = calloc(n, sizeof(*t));

	for (int i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, fn, (char *)args + i * arg_size)) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
}

/* The argument of workloads whose threads each run a number of steps. */
struct bench_worker {
	unsigned id;
	uint64_t steps;
};

/* main() of such a workload: parses -t/-s, runs fn on every thread with
 * full_steps scaled by -s, returns the exit status (0). */
static inline int bench_main_steps(int argc, char **argv, void *(*fn)(void *),
				   uint64_t full_steps)
{
	struct bench_args a;
	struct bench_worker *w;

	bench_parse(argc, argv, &a);
	w = calloc(a.threads, sizeof(*w));
	if (!w) {
		perror("calloc");
		return 1;
	}
	for (int i = 0; i < a.threads; i++)
		w[i] = (struct bench_worker){ .id = i,
					      .steps = bench_n(full_steps,
							       a.scale) };
	bench_run_threads(a.threads, fn, w, sizeof(*w));
	free(w);
	return 0;
}

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
