// SPDX-License-Identifier: MIT
/*
 * bench/profilers/workload.c - an allocation-hammering program with a
 * known live heap, for comparing heap profilers.
 *
 * usage: workload OPS SLOTS SEED
 * Keeps SLOTS live blocks; each of OPS steps frees a random slot and
 * allocates a new block there (80% 16-256 B, 19% 256 B-4 KiB, 1% 4-64 KiB).
 * At the end ("the known point") it prints the true live requested bytes,
 * asks whichever profiler is loaded for its in-use estimate (heapscope:
 * heapscope_heap_profile; jemalloc: mallctl prof.dump; gperftools:
 * HeapProfilerDump), and exits without freeing (so heaptrack's "leaked"
 * is the live heap at that point).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "heapscope/heapscope.h"

static uint64_t s;

static uint64_t rnd(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static size_t pick(void)
{
	uint64_t r = rnd() % 100;

	if (r < 80)
		return 16 + rnd() % 241;
	if (r < 99)
		return 256 + rnd() % 3841;
	return 4096 + rnd() % 61441;
}

int main(int argc, char **argv)
{
	size_t ops = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000000;
	size_t slots = argc > 2 ? strtoull(argv[2], NULL, 0) : 100000;
	void **p;
	size_t *sz, live = 0;
	struct timespec t0, t1;
	int (*hp)(struct heapscope_profile **);
	void (*hfree)(struct heapscope_profile *);
	int (*mallctl)(const char *, void *, size_t *, void *, size_t);
	void (*gdump)(const char *);

	s = argc > 3 ? strtoull(argv[3], NULL, 0) : 88172645463325252ULL;
	p = calloc(slots, sizeof(void *));
	sz = calloc(slots, sizeof(size_t));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < ops; i++) {
		size_t j = rnd() % slots, n = pick();

		free(p[j]);
		live -= sz[j];
		p[j] = malloc(n);
		((char *)p[j])[0] = 1;
		sz[j] = n;
		live += n;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("time_s %.4f\n", (double)(t1.tv_sec - t0.tv_sec) +
					(double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
	/* the two calloc'd bookkeeping arrays are live too */
	printf("true_live_bytes %zu\n", live + 2 * slots * sizeof(void *));
	printf("true_live_malloc_bytes %zu\n", live);
	hp = (int (*)(struct heapscope_profile **))dlsym(RTLD_DEFAULT, "heapscope_heap_profile");
	hfree = (void (*)(struct heapscope_profile *))dlsym(RTLD_DEFAULT, "heapscope_profile_free");
	if (hp && hfree && getenv("HEAPSCOPE_SAMPLE_RATE") &&
	    atoll(getenv("HEAPSCOPE_SAMPLE_RATE")) > 0) {
		struct heapscope_profile *prof;

		if (hp(&prof) == 0) {
			printf("estimate_bytes %lu\n",
			       (unsigned long)prof->requested_estimate);
			hfree(prof);
		}
	}
	mallctl = (int (*)(const char *, void *, size_t *, void *, size_t))
		dlsym(RTLD_DEFAULT, "mallctl");
	if (mallctl && getenv("JE_DUMP")) {
		const char *f = getenv("JE_DUMP");

		mallctl("prof.dump", NULL, NULL, (void *)&f, sizeof(f));
	}
	gdump = (void (*)(const char *))dlsym(RTLD_DEFAULT, "HeapProfilerDump");
	if (gdump && getenv("HEAPPROFILE"))
		gdump("known-point");
	fflush(stdout);
	return 0; /* the live set is not freed */
}
