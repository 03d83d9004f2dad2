// SPDX-License-Identifier: MIT
/*
 * bench_residency.c - time of one residency scan (collector/residency.c)
 * of the live samples of a 1 GiB heap, sampled at the default 2 MiB.
 *
 * Runs preloaded with libheapscope.so: allocates HEAP_MIB MiB in objects of
 * 64 B .. 32 KiB (log-uniform, fixed seed), touches every byte, copies the
 * registry's live records (in-process, single-threaded: no seqlock needed),
 * then times hs_residency__scan of /proc/self over RUNS runs and prints the
 * median, min and max, the samples and OS pages scanned, and the resident
 * fraction found.  Root is needed for /proc/kpageflags (else PFNs are 0
 * and only pagemap is read).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heapscope.h"

#define RUNS 21

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t heap = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20, used = 0;
	struct heapscope_registry *reg =
		dlsym(RTLD_DEFAULT, HEAPSCOPE_REGISTRY_SYMBOL);
	struct hs_sample *samples, **ptrs;
	const struct heapscope_record *recs;
	struct hs_residency *r;
	double t[RUNS], t_open[RUNS];
	uint64_t pages = 0, present = 0;
	unsigned seed = 12345;
	size_t n = 0;

	if (!reg || reg->magic != HEAPSCOPE_REGISTRY_MAGIC) {
		fprintf(stderr, "run with LD_PRELOAD=libheapscope.so\n");
		return 1;
	}
	while (used < heap) {
		/* log-uniform 64 B .. 32 KiB */
		size_t sz = (size_t)64 << (rand_r(&seed) % 10);
		char *p;

		sz += rand_r(&seed) % sz;
		p = malloc(sz);
		if (!p)
			return 1;
		memset(p, 1, sz);
		used += sz;
	}
	recs = (const struct heapscope_record *)(uintptr_t)reg->records;
	samples = calloc(reg->high_water + 1, sizeof(*samples));
	ptrs = calloc(reg->high_water + 1, sizeof(*ptrs));
	for (uint64_t i = 0; i < reg->high_water; i++) {
		if (!recs[i].seq)
			continue;
		samples[n].seq = recs[i].seq;
		samples[n].ptr = recs[i].ptr;
		samples[n].requested = recs[i].requested;
		samples[n].allocated = recs[i].allocated;
		samples[n].weight = recs[i].weight;
		ptrs[n] = &samples[n];
		n++;
	}
	for (int mode = 1; mode >= 0; mode--) {
	for (int k = 0; k < RUNS; k++) {
		double t0 = now_us(), t1, t2;

		if (hs_residency__open(&r, getpid()))
			return 1;
		hs_residency__set_kpageflags(r, mode);
		t1 = now_us();
		if (hs_residency__scan(r, ptrs, n))
			return 1;
		t2 = now_us();
		hs_residency__close(r);
		t[k] = t2 - t1;
		t_open[k] = now_us() - t0;
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_d);
	qsort(t_open, RUNS, sizeof(t_open[0]), cmp_d);
	printf("%s: median %.1f us, min %.1f us, max %.1f us (%d runs); "
	       "with open/close: median %.1f us\n",
	       mode ? "pagemap + kpageflags" : "pagemap only",
	       t[RUNS / 2], t[0], t[RUNS - 1], RUNS, t_open[RUNS / 2]);
	}
	for (size_t i = 0; i < n; i++) {
		pages += samples[i].res.pages;
		present += samples[i].res.present;
	}
	printf("heap %zu MiB, period %lld, %zu samples, %llu OS pages, "
	       "%llu present, kpageflags %s\n",
	       heap >> 20, (long long)reg->sample_period, n,
	       (unsigned long long)pages, (unsigned long long)present,
	       getuid() == 0 ? "readable (root)" : "not readable");
	return 0;
}
