// SPDX-License-Identifier: MIT
/*
 * bench_residency.c - time of one residency scan (collector/profiles/residency.c)
 * of the live samples of a 1 GiB heap, sampled at the default 2 MiB.
 *
 * Runs preloaded with libheapscope.so: allocates HEAP_MIB MiB in objects of
 * 64 B .. 32 KiB (log-uniform, fixed seed), touches every byte, copies the
 * registry's live records (in-process, single-threaded: no seqlock needed),
 * then times hs_residency__scan of /proc/self, RUNS times (argv[2], default
 * 51) for each kpageflags mode (profiles.h): pagemap only (HS_KPF_NONE),
 * the default (HS_KPF_SHAPE) and every present page (HS_KPF_ALL, once per
 * merge gap in $GAPS, default "64").  Prints median, min and max, what was
 * read (preads, entries), the samples and OS pages scanned, and checks that
 * SHAPE and ALL agree on zero / huge / compound pages of every sample.
 * Root is needed for /proc/kpageflags (else PFNs are 0 and only pagemap is
 * read).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profiles.h"

#define MAX_RUNS 1001

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

struct mode {
	const char *name;
	enum hs_kpf_mode kpf;
	uint32_t gap;
};

/* Median / min / max of RUNS scans in mode m; fills the samples' res. */
static int time_mode(const struct mode *m, struct hs_sample **ptrs, size_t n,
		     int runs)
{
	static double t[MAX_RUNS], t_open[MAX_RUNS];
	struct hs_residency_stats st;
	struct hs_residency *r;

	for (int k = 0; k < runs; k++) {
		double t0 = now_us(), t1, t2;

		if (hs_residency__open(&r, getpid()))
			return -1;
		hs_residency__set_flags(r, m->kpf);
		hs_residency__set_flags_gap(r, m->gap);
		t1 = now_us();
		if (hs_residency__scan(r, ptrs, n))
			return -1;
		t2 = now_us();
		hs_residency__stats(r, &st);
		hs_residency__close(r);
		t[k] = t2 - t1;
		t_open[k] = now_us() - t0;
	}
	qsort(t, (size_t)runs, sizeof(t[0]), cmp_d);
	qsort(t_open, (size_t)runs, sizeof(t_open[0]), cmp_d);
	printf("%-22s median %8.1f us, min %8.1f, max %8.1f (%d runs); "
	       "with open/close %8.1f us | pagemap %llu preads %llu entries, "
	       "kpageflags %llu pages %llu preads %llu entries\n",
	       m->name, t[runs / 2], t[0], t[runs - 1], runs,
	       t_open[runs / 2], (unsigned long long)st.pagemap_reads,
	       (unsigned long long)st.pagemap_entries,
	       (unsigned long long)st.kpf_pages,
	       (unsigned long long)st.kpf_reads,
	       (unsigned long long)st.kpf_entries);
	return 0;
}

int main(int argc, char **argv)
{
	size_t heap = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) << 20, used = 0;
	int runs = argc > 2 ? atoi(argv[2]) : 51;
	const char *gaps = getenv("GAPS");
	struct heapscope_registry *reg =
		dlsym(RTLD_DEFAULT, HEAPSCOPE_REGISTRY_SYMBOL);
	struct hs_sample *samples, **ptrs;
	struct hs_page_res *shape;
	const struct heapscope_record *recs;
	uint64_t pages = 0, present = 0, huge = 0, zero = 0, differ = 0;
	unsigned seed = 12345;
	char name[64], *gp;
	size_t n = 0;

	if (!reg || reg->magic != HEAPSCOPE_REGISTRY_MAGIC) {
		fprintf(stderr, "run with LD_PRELOAD=libheapscope.so\n");
		return 1;
	}
	if (runs < 1 || runs > MAX_RUNS)
		runs = 51;
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
	shape = calloc(reg->high_water + 1, sizeof(*shape));
	if (!samples || !ptrs || !shape)
		return 1;
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
	if (time_mode(&(struct mode){"pagemap only", HS_KPF_NONE, 64}, ptrs,
		      n, runs) ||
	    time_mode(&(struct mode){"pagemap + shape flags", HS_KPF_SHAPE,
				     64},
		      ptrs, n, runs))
		return 1;
	for (size_t i = 0; i < n; i++)
		shape[i] = samples[i].res;
	gp = (char *)(gaps && *gaps ? gaps : "64");
	while (*gp) {
		uint32_t gap = (uint32_t)strtoul(gp, &gp, 10);

		snprintf(name, sizeof(name), "pagemap + all flags/%u", gap);
		if (time_mode(&(struct mode){name, HS_KPF_ALL, gap}, ptrs, n,
			      runs))
			return 1;
		while (*gp == ',' || *gp == ' ')
			gp++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hs_page_res *a = &samples[i].res, *b = &shape[i];

		pages += a->pages;
		present += a->present;
		huge += a->huge;
		zero += a->zero;
		if (a->zero != b->zero || a->huge != b->huge ||
		    a->compound_head != b->compound_head ||
		    a->compound_tail != b->compound_tail ||
		    a->present != b->present || a->swapped != b->swapped)
			differ++;
	}
	printf("heap %zu MiB, period %lld, %zu samples, %llu OS pages, "
	       "%llu present, %llu zero, %llu huge; shape vs all flags: %llu "
	       "samples differ; kpageflags %s\n",
	       heap >> 20, (long long)reg->sample_period, n,
	       (unsigned long long)pages, (unsigned long long)present,
	       (unsigned long long)zero, (unsigned long long)huge,
	       (unsigned long long)differ,
	       getuid() == 0 ? "readable (root)" : "not readable");
	return differ != 0;
}
