// SPDX-License-Identifier: MIT
/*
 * placement_target.c - proof of placement (run preloaded with
 * libheapscope.so, as root; exit 0 = pass, 1 = fail, 77 = skip).
 *
 *  1. At sampling period 1 and at a small period (4 KiB), allocate a mix
 *     of sizes (1 B .. 40 KiB) and keep them live; every sampled record in
 *     the registry (read in-process through `heapscope_registry`) must
 *     own its OS pages: no other live allocation (sampled or not) overlaps
 *     the 4 KiB pages under [ptr, ptr + allocated).
 *  2. Sampled pages are never THP-backed: kpageflags THP (bit 22) is 0 on
 *     every PFN under every sample, and the VMA of the sampled region has
 *     the "nh" VmFlag and AnonHugePages 0 kB in /proc/self/smaps.
 *  3. Unsampled memory the allocator marks MADV_HUGEPAGE (a chunk made
 *     for one request > 64 MiB, allocator/page_heap.c) can be THP-backed:
 *     96 MiB allocated with sampling off, touched, shows THP PFNs and
 *     AnonHugePages > 0 (skipped when THP is "never").
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

#pragma weak heapscope_set_sample_period

#define NALLOC 3000
#define KPF_THP 22

struct iv {
	uintptr_t start, end;
};

static int pm_fd, kpf_fd;

static int cmp_iv(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* 1 if any PFN under [p, p+len) has the THP flag; counts present pages. */
static int thp_pages(uintptr_t p, size_t len, size_t *present, size_t *thp)
{
	for (uintptr_t a = p & ~4095ul; a < p + len; a += 4096) {
		uint64_t e, f;

		if (pread(pm_fd, &e, 8, (off_t)(a / 4096) * 8) != 8)
			return -1;
		if (!(e >> 63))
			continue;
		(*present)++;
		if (pread(kpf_fd, &f, 8, (off_t)(e & ((1ull << 55) - 1)) * 8) != 8)
			return -1;
		*thp += (f >> KPF_THP) & 1;
	}
	return 0;
}

/* VmFlags and AnonHugePages (kB) of the VMA containing addr. */
static int vma_info(uintptr_t addr, char *flags, size_t flen, long *ahp_kb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		/* header "start-end perms ..."; field lines never parse */
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = addr >= s && addr < e;
			continue;
		}
		if (!in)
			continue;
		if (!strncmp(line, "AnonHugePages:", 14))
			*ahp_kb = atol(line + 14);
		if (!strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, flen, "%s", line + 8);
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static int check_placement(const char *what, int64_t period)
{
	const struct heapscope_registry *reg =
		dlsym(RTLD_DEFAULT, HEAPSCOPE_REGISTRY_SYMBOL);
	const struct heapscope_record *recs;
	static void *ptrs[NALLOC];
	static struct iv all[NALLOC];
	unsigned seed = 99;
	size_t nsamp = 0, bad = 0, present = 0, thp = 0;

	heapscope_set_sample_period(period);
	/* the new period applies at each thread's next slow path */
	free(malloc(1 << 20));
	for (int i = 0; i < NALLOC; i++) {
		size_t sz = 1 + rand_r(&seed) % (i % 10 == 0 ? 40960 : 512);

		ptrs[i] = malloc(sz);
		memset(ptrs[i], 1, sz);
		all[i].start = (uintptr_t)ptrs[i];
		all[i].end = all[i].start + malloc_usable_size(ptrs[i]);
	}
	qsort(all, NALLOC, sizeof(all[0]), cmp_iv);
	recs = (const struct heapscope_record *)(uintptr_t)reg->records;
	for (uint64_t k = 0; k < reg->high_water; k++) {
		const struct heapscope_record *r = &recs[k];
		uintptr_t ps, pe;
		size_t lo = 0, hi = NALLOC;
		int mine = 0;

		if (!r->seq)
			continue;
		ps = r->ptr & ~4095ul;
		pe = (r->ptr + (r->allocated ? r->allocated : 1) + 4095) & ~4095ul;
		/* is it one of ours? (the rest are libc's own) */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (all[mid].start < ps)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* every allocation starting before pe and ending after ps */
		for (size_t j = lo ? lo - 1 : 0; j < NALLOC && all[j].start < pe; j++) {
			if (all[j].end <= ps)
				continue;
			if (all[j].start == r->ptr) {
				mine = 1;
				continue;
			}
			fprintf(stderr, "%s: sample %#lx (+%lu) shares a page with %#lx\n",
				what, (unsigned long)r->ptr, (unsigned long)r->allocated,
				(unsigned long)all[j].start);
			bad++;
		}
		if (r->ptr < reg->region_start ||
		    r->ptr >= reg->region_start + reg->region_size) {
			fprintf(stderr, "%s: sample %#lx outside the sampled region\n",
				what, (unsigned long)r->ptr);
			bad++;
		}
		if (mine) {
			nsamp++;
			if (thp_pages(r->ptr, r->allocated, &present, &thp))
				return -1;
		}
	}
	printf("%s: %zu of our allocations sampled, %zu page-sharing "
	       "violations, %zu present pages, %zu THP\n",
	       what, nsamp, bad, present, thp);
	for (int i = 0; i < NALLOC; i++)
		free(ptrs[i]);
	if (nsamp == 0 || bad || thp)
		return 1;
	return 0;
}

int main(void)
{
	const struct heapscope_registry *reg =
		dlsym(RTLD_DEFAULT, HEAPSCOPE_REGISTRY_SYMBOL);
	char flags[256] = "", thp_mode[128] = "";
	long ahp = -1;
	size_t present = 0, thp = 0, big = 96u << 20;
	int fail = 0;
	char *p;
	FILE *f;

	if (!reg || reg->magic != HEAPSCOPE_REGISTRY_MAGIC ||
	    !heapscope_set_sample_period) {
		fprintf(stderr, "SKIP: not running on libheapscope.so\n");
		return 77;
	}
	pm_fd = open("/proc/self/pagemap", O_RDONLY);
	kpf_fd = open("/proc/kpageflags", O_RDONLY);
	if (pm_fd < 0 || kpf_fd < 0 || geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root for /proc/kpageflags and PFNs\n");
		return 77;
	}
	fail |= check_placement("period 1", 1);
	fail |= check_placement("period 4096", 4096);

	if (vma_info(reg->region_start + 4096, flags, sizeof(flags), &ahp)) {
		fprintf(stderr, "no smaps entry for the sampled region\n");
		return 1;
	}
	printf("sampled region VMA: VmFlags:%s", flags);
	printf("sampled region VMA: AnonHugePages %ld kB\n", ahp);
	if (!strstr(flags, " nh") || ahp != 0)
		fail = 1;

	/* Unsampled memory in a MADV_HUGEPAGE chunk. */
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(thp_mode, sizeof(thp_mode), f))
			thp_mode[0] = '\0';
		fclose(f);
	}
	if (strstr(thp_mode, "[never]")) {
		printf("THP is off on this system: huge-page half skipped\n");
		return fail;
	}
	heapscope_set_sample_period(0);
	free(malloc(1 << 20));
	p = malloc(big);
	if (!p)
		return 1;
	if ((uintptr_t)p >= reg->region_start &&
	    (uintptr_t)p < reg->region_start + reg->region_size) {
		fprintf(stderr, "the big block was sampled anyway\n");
		return 1;
	}
	memset(p, 7, big);
	thp_pages((uintptr_t)p, big, &present, &thp);
	ahp = -1;
	vma_info((uintptr_t)p + big / 2, flags, sizeof(flags), &ahp);
	printf("unsampled 96 MiB block: %zu present pages, %zu THP; VMA "
	       "AnonHugePages %ld kB, VmFlags:%s",
	       present, thp, ahp, flags);
	if (!thp || ahp <= 0 || !strstr(flags, " hg"))
		fail = 1;
	free(p);
	printf("%s\n", fail ? "FAIL" : "PASS");
	return fail;
}
