// SPDX-License-Identifier: MIT
/*
 * producer_consumer: one thread allocates, another frees, the kind of
 * xmalloc-test. -t N runs N producer/consumer pairs (2N threads). A producer
 * fills batches of 256 objects (16..128 bytes) and hands them over a bounded
 * queue (64 batches) to its consumer, which reads and frees them: every free
 * is remote.
 */
#include "common.h"

#define BATCH 256
#define DEPTH 64
#define OBJECTS 4000000ULL

struct batch {
	void *p[BATCH];
};

struct pair {
	unsigned id;
	uint64_t batches;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	struct batch *q[DEPTH];
	unsigned head, tail; /* head - tail = batches queued */
};

static void *produce(void *arg)
{
	struct pair *p = arg;
	uint64_t s = rng_seed(p->id);

	for (uint64_t b = 0; b < p->batches; b++) {
		struct batch *bt = malloc(sizeof(*bt));

		for (int i = 0; i < BATCH; i++) {
			size_t n = 16 + rng_next(&s) % 113;

			bt->p[i] = malloc(n);
			*(uint64_t *)bt->p[i] = n;
		}
		pthread_mutex_lock(&p->mu);
		while (p->head - p->tail == DEPTH)
			pthread_cond_wait(&p->not_full, &p->mu);
		p->q[p->head++ % DEPTH] = bt;
		pthread_cond_signal(&p->not_empty);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

static void *consume(void *arg)
{
	struct pair *p = arg;
	uint64_t sum = 0;

	for (uint64_t b = 0; b < p->batches; b++) {
		struct batch *bt;

		pthread_mutex_lock(&p->mu);
		while (p->head == p->tail)
			pthread_cond_wait(&p->not_empty, &p->mu);
		bt = p->q[p->tail++ % DEPTH];
		pthread_cond_signal(&p->not_full);
		pthread_mutex_unlock(&p->mu);
		for (int i = 0; i < BATCH; i++) {
			sum += *(uint64_t *)bt->p[i];
			free(bt->p[i]);
		}
		free(bt);
	}
	bench_sink += sum;
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	struct pair *p;
	pthread_t *t;

	bench_parse(argc, argv, &a);
	p = calloc(a.threads, sizeof(*p));
	t = calloc(2 * a.threads, sizeof(*t));
	for (int i = 0; i < a.threads; i++) {
		p[i].id = i;
		p[i].batches = bench_n(OBJECTS / BATCH, a.scale);
		pthread_mutex_init(&p[i].mu, NULL);
		pthread_cond_init(&p[i].not_empty, NULL);
		pthread_cond_init(&p[i].not_full, NULL);
		pthread_create(&t[2 * i], NULL, produce, &p[i]);
		pthread_create(&t[2 * i + 1], NULL, consume, &p[i]);
	}
	for (int i = 0; i < 2 * a.threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	free(p);
	return 0;
}
