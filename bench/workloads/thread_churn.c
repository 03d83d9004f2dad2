// SPDX-License-Identifier: MIT
/*
 * thread_churn: many short-lived threads. -t N threads run at a time; each
 * allocates 1000 objects (16..512 bytes), frees half, and exits, leaving the
 * other half to be freed by the thread that joins it. Stresses thread-cache
 * creation and teardown and the return of a dead thread's memory.
 */
#include "common.h"

#define THREADS 8000ULL
#define OBJS 1000

struct job {
	unsigned id;
	void **kept;
};

static void *work(void *arg)
{
	struct job *j = arg;
	uint64_t s = rng_seed(j->id);
	void **p = malloc(OBJS * sizeof(*p));

	for (int i = 0; i < OBJS; i++) {
		size_t n = 16 + rng_next(&s) % 497;

		p[i] = malloc(n);
		memset(p[i], i, n < 16 ? n : 16);
	}
	for (int i = 0; i < OBJS; i += 2)
		free(p[i]);
	j->kept = p;
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	uint64_t total, started = 0;
	pthread_t *t;
	struct job *j;

	bench_parse(argc, argv, &a);
	total = bench_n(THREADS, a.scale);
	t = calloc(a.threads, sizeof(*t));
	j = calloc(a.threads, sizeof(*j));
	while (started < total) {
		int n = 0;

		for (; n < a.threads && started < total; n++, started++) {
			j[n].id = (unsigned)started;
			pthread_create(&t[n], NULL, work, &j[n]);
		}
		for (int i = 0; i < n; i++) {
			pthread_join(t[i], NULL);
			for (int k = 1; k < OBJS; k += 2)
				free(j[i].kept[k]);
			free(j[i].kept);
		}
	}
	free(t);
	free(j);
	return 0;
}
