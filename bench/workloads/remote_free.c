// SPDX-License-Identifier: MIT
/*
 * remote_free: two threads each churn small objects (16-512 B, a live
 * window of 4096 per thread); of every four objects a thread gives up,
 * three it frees itself and one it hands to the other thread, which frees
 * it (issue 19's "2-thread program where a quarter of the frees come from
 * the other thread").  Hand-over goes through a per-direction buffer of
 * 256 pointers swapped under a mutex, so the benchmark's own
 * synchronisation is one lock per 256 objects.
 *
 * -t is ignored (always 2 threads); -s scales the operations (1.0: 8 M
 * malloc/free pairs per thread).
 */
#include <sched.h>

#include "common.h"

#define LIVE 4096
#define XFER 256

struct xfer {
	pthread_mutex_t lock;
	void *buf[XFER]; /* full when n == XFER, waiting for the receiver */
	int n;
	int done;
} __attribute__((aligned(64)));

static struct xfer boxes[2] = {
	{.lock = PTHREAD_MUTEX_INITIALIZER},
	{.lock = PTHREAD_MUTEX_INITIALIZER},
};
static uint64_t ops;

/* Frees what the other thread handed to us (box `in`), if anything. */
static void drain(struct xfer *in, int force)
{
	void *local[XFER];
	int n = 0;

	if (!force && __atomic_load_n(&in->n, __ATOMIC_RELAXED) < XFER)
		return;
	pthread_mutex_lock(&in->lock);
	if (force || in->n == XFER) {
		n = in->n;
		memcpy(local, in->buf, (size_t)n * sizeof(void *));
		__atomic_store_n(&in->n, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&in->lock);
	for (int i = 0; i < n; i++)
		free(local[i]);
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct xfer *out = &boxes[1 - me], *in = &boxes[me];
	void **live = calloc(LIVE, sizeof(void *));
	void *pend[XFER];
	int npend = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(me + 1);

	for (uint64_t i = 0; i < ops; i++) {
		uint64_t r = rng_next(&seed);
		size_t slot = r % LIVE;
		void *old = live[slot];

		live[slot] = malloc(16 + (r >> 32) % 497);
		bench_use(live[slot]);
		if (!old)
			continue;
		if ((r >> 20 & 3) != 0) {
			free(old);
			continue;
		}
		pend[npend++] = old;
		if (npend == XFER) {
			/* wait for the other thread to take the previous
			 * batch; it drains until we say we are done */
			for (;;) {
				pthread_mutex_lock(&out->lock);
				int empty = out->n == 0;
				if (empty) {
					memcpy(out->buf, pend, sizeof(pend));
					__atomic_store_n(&out->n, XFER,
							 __ATOMIC_RELAXED);
				}
				pthread_mutex_unlock(&out->lock);
				if (empty)
					break;
				drain(in, 0);
				sched_yield(); /* the peer may need this CPU */
			}
			npend = 0;
		}
		drain(in, 0);
	}
	for (int i = 0; i < npend; i++)
		free(pend[i]);
	for (size_t s = 0; s < LIVE; s++)
		free(live[s]);
	free(live);
	/* tell the peer, then take what it still hands us until it is done */
	__atomic_store_n(&out->done, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&in->done, __ATOMIC_ACQUIRE))
		drain(in, 0);
	drain(in, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	pthread_t t[2];
	double t0;

	bench_parse(argc, argv, &a);
	ops = bench_n(8000000, a.scale);
	t0 = bench_now();
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%.3f\n", bench_now() - t0);
	return 0;
}
