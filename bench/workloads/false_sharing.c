// SPDX-License-Identifier: MIT
/*
 * false_sharing: false sharing between threads, the kind of Hoard's
 * cache-scratch (passive) and cache-thrash (active). Passive: the main
 * thread allocates one 8-byte object per thread back to back and hands them
 * out; each thread frees its object and then, repeatedly, allocates an
 * 8-byte object, writes it many times and frees it, so an allocator that
 * reuses the freed neighbour slots puts threads on one cache line. Active:
 * the threads allocate their 8-byte objects concurrently and write them.
 */
#include "common.h"

#define OBJECTS 160000ULL
#define WRITES 400

struct worker {
	unsigned id;
	void *handed; /* passive: object allocated by main, freed here */
	uint64_t objects;
};

static void write_many(volatile char *p)
{
	for (int j = 0; j < WRITES; j++)
		for (int k = 0; k < 8; k++)
			p[k] = (char)(p[k] + 1);
}

static void *passive(void *arg)
{
	struct worker *w = arg;

	free(w->handed);
	for (uint64_t i = 0; i < w->objects; i++) {
		char *p = malloc(8);

		memset(p, 0, 8);
		write_many(p);
		free(p);
	}
	return NULL;
}

static void *active(void *arg)
{
	struct worker *w = arg;

	for (uint64_t i = 0; i < w->objects; i++) {
		char *p = malloc(8);

		memset(p, 0, 8);
		write_many(p);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_args a;
	struct worker *w;

	bench_parse(argc, argv, &a);
	w = calloc(a.threads, sizeof(*w));
	for (int i = 0; i < a.threads; i++)
		w[i] = (struct worker){ .id = i,
					.handed = malloc(8),
					.objects = bench_n(OBJECTS, a.scale) };
	bench_run_threads(a.threads, passive, w, sizeof(*w));
	bench_run_threads(a.threads, active, w, sizeof(*w));
	free(w);
	return 0;
}
