// SPDX-License-Identifier: MIT
/*
 * larson_server: server-like churn with objects freed by other threads, the
 * kind of Larson & Krishnan's larson benchmark. There are N bins of 8192
 * objects (16..512 bytes). In each round thread i replaces random objects in
 * bin (i + round) % N, so with N > 1 most frees are of blocks another thread
 * allocated; a barrier separates rounds. With -t 1 it is single-thread
 * server churn (larson with one thread).
 */
#include "common.h"

#define SLOTS 8192
#define ROUNDS 40
#define STEPS_PER_ROUND 480000ULL

struct worker {
	unsigned id;
	int threads;
	uint64_t steps;
};

static void ***bins;
static pthread_barrier_t barrier;

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t s = rng_seed(w->id), sum = 0;

	for (int round = 0; round < ROUNDS; round++) {
		void **bin = bins[(w->id + round) % w->threads];

		for (uint64_t i = 0; i < w->steps; i++) {
			uint64_t r = rng_next(&s);
			size_t k = r % SLOTS, n = 16 + (r >> 32) % 497;

			if (bin[k])
				sum += *(char *)bin[k];
			free(bin[k]);
			bin[k] = malloc(n);
			memset(bin[k], (int)i, n < 32 ? n : 32);
		}
		pthread_barrier_wait(&barrier);
	}
	bench_sink += sum;
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	struct worker *w;

	bench_parse(argc, argv, &a);
	bins = calloc(a.threads, sizeof(*bins));
	for (int i = 0; i < a.threads; i++)
		bins[i] = calloc(SLOTS, sizeof(void *));
	pthread_barrier_init(&barrier, NULL, a.threads);
	w = calloc(a.threads, sizeof(*w));
	for (int i = 0; i < a.threads; i++)
		w[i] = (struct worker){ .id = i,
					.threads = a.threads,
					.steps = bench_n(STEPS_PER_ROUND, a.scale) };
	bench_run_threads(a.threads, work, w, sizeof(*w));
	for (int i = 0; i < a.threads; i++) {
		for (int k = 0; k < SLOTS; k++)
			free(bins[i][k]);
		free(bins[i]);
	}
	free(bins);
	free(w);
	return 0;
}
