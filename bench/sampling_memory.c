// SPDX-License-Identifier: MIT
/*
 * bench/sampling_memory.c - what sampling costs in memory, per size mix.
 *
 * Builds a live heap of at least HEAP bytes (requested) from one size mix,
 * writes every byte of it, then prints one line of key=value pairs:
 *
 *   requested  bytes requested by the live heap (the denominator)
 *   samples    live samples
 *   proxy      proxy bytes (heapscope_get_sampling_stats.proxy_bytes)
 *   rounding   sampled 8 KiB pages beyond requested: pages_bytes - sum r
 *   rounding_res  resident 4 KiB pages of the samples beyond requested
 *              (mincore over every sample's pages; the part of rounding
 *              that costs memory)
 *   record     registry bytes touched (record_bytes, 600 B a slot) plus
 *              the record extension (40 B a slot, same high water)
 *   cached     freed sampled pages kept for reuse (cached_bytes; bounded
 *              by HEAPSCOPE_SAMPLED_CACHE, not proportional to the heap)
 *   cost_pct   (proxy + rounding_res + record) / requested, in %
 *   cost_reserved_pct  the same with rounding (whole 8 KiB pages)
 *   rss        VmRSS after the heap is built, bytes
 *
 * Run preloaded with libheapscope.so (bench/sampling_memory.sh runs every
 * mix with sampling off and at the default period and prints the RSS
 * difference, the honest total).  Without heapscope the statistics are 0.
 *
 *   sampling_memory MIX [HEAP_MIB [SEED [CHURN]]]
 *   MIX: small   16-256 B uniform
 *        wide    16 B-64 KiB uniform
 *        python  98% 32-512 B uniform, 2% 4-64 KiB log-uniform
 *   CHURN: rounds (default 0) of freeing every other object and refilling
 *        to HEAP with new ones, so that proxies and samples land on memory
 *        that was written before (a fresh heap leaves untouched proxies
 *        non-resident, hiding their cost from RSS) and freed samples fill
 *        the sampled page cache.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

extern struct heapscope_registry heapscope_registry;
#pragma weak heapscope_get_sampling_stats
#pragma weak heapscope_registry

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double unit(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

static size_t draw(const char *mix)
{
	if (!strcmp(mix, "small"))
		return 16 + next() % 241;
	if (!strcmp(mix, "wide"))
		return 16 + next() % (65536 - 16 + 1);
	/* python */
	if (next() % 100 < 98)
		return 32 + next() % (512 - 32 + 1);
	return (size_t)(4096.0 * exp2(4.0 * unit()));
}

static uint64_t rss_bytes(void)
{
	char line[256];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb << 10;
}

/* Resident bytes of [p, p + n) by mincore (n a multiple of the OS page). */
static uint64_t resident(uintptr_t p, uint64_t n)
{
	static unsigned char vec[1 << 16];
	long os = sysconf(_SC_PAGESIZE);
	uint64_t r = 0, np = n / (uint64_t)os;

	if (np > sizeof(vec))
		np = sizeof(vec);
	if (mincore((void *)p, np * (uint64_t)os, vec))
		return 0;
	for (uint64_t i = 0; i < np; i++)
		r += vec[i] & 1;
	return r * (uint64_t)os;
}

int main(int argc, char **argv)
{
	struct heapscope_sampling_stats st;
	const char *mix = argc > 1 ? argv[1] : "small";
	uint64_t heap = (argc > 2 ? strtoull(argv[2], NULL, 0) : 1024) << 20;
	uint64_t req = 0, sreq = 0, sres = 0, rec_bytes = 0, n = 0, cap;
	int churn = argc > 4 ? atoi(argv[4]) : 0;
	double proxy_res, reserved;
	void **ptrs;
	uint32_t *sizes;

	rng = argc > 3 ? strtoull(argv[3], NULL, 0) : 42;
	if (!rng)
		rng = 42;
	if (strcmp(mix, "small") && strcmp(mix, "wide") &&
	    strcmp(mix, "python")) {
		fprintf(stderr,
			"usage: %s small|wide|python [HEAP_MIB [SEED "
			"[CHURN]]]\n",
			argv[0]);
		return 2;
	}
	/* the pointer array from mmap, outside the measured heap */
	cap = heap / 16 + 1;
	ptrs = mmap(NULL, cap * sizeof(*ptrs), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	sizes = mmap(NULL, cap * sizeof(*sizes), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ptrs == MAP_FAILED || sizes == MAP_FAILED)
		return 1;
	while (req < heap && n < cap) {
		size_t r = draw(mix);

		ptrs[n] = malloc(r);
		if (!ptrs[n])
			return 1;
		memset(ptrs[n], 0x5a, r);
		sizes[n] = (uint32_t)r;
		req += r;
		n++;
	}
	for (int round = 0; round < churn; round++) {
		for (uint64_t i = round & 1; i < n; i += 2) {
			req -= sizes[i];
			free(ptrs[i]);
			ptrs[i] = NULL;
			sizes[i] = 0;
		}
		for (uint64_t i = 0; i < n && req < heap; i++) {
			size_t r;

			if (ptrs[i])
				continue;
			r = draw(mix);
			ptrs[i] = malloc(r);
			if (!ptrs[i])
				return 1;
			memset(ptrs[i], 0x5b, r);
			sizes[i] = (uint32_t)r;
			req += r;
		}
	}
	memset(&st, 0, sizeof(st));
	if (heapscope_get_sampling_stats)
		heapscope_get_sampling_stats(&st, sizeof(st));
	if (&heapscope_registry && heapscope_registry.records) {
		const struct heapscope_registry *h = &heapscope_registry;
		const struct heapscope_record *recs =
			(const void *)(uintptr_t)h->records;

		for (uint64_t i = 0; i < h->high_water; i++) {
			if (!recs[i].seq)
				continue;
			sreq += recs[i].requested;
			sres += resident(recs[i].span_start,
					 recs[i].span_bytes);
		}
		rec_bytes = st.record_bytes +
			    (h->ext_records ? h->high_water * h->ext_size : 0);
	}
	proxy_res = (double)st.proxy_bytes + (double)(sres - sreq) +
		    (double)rec_bytes;
	reserved = (double)st.proxy_bytes + (double)(st.pages_bytes - sreq) +
		   (double)rec_bytes;
	printf("mix=%s objects=%lu requested=%lu samples=%lu proxy=%lu "
	       "rounding=%lu rounding_res=%lu record=%lu cached=%lu "
	       "cost_pct=%.3f cost_reserved_pct=%.3f rss=%lu\n",
	       mix, (unsigned long)n, (unsigned long)req,
	       (unsigned long)st.live, (unsigned long)st.proxy_bytes,
	       (unsigned long)(st.pages_bytes - sreq),
	       (unsigned long)(sres - sreq), (unsigned long)rec_bytes,
	       (unsigned long)st.cached_bytes, 100.0 * proxy_res / (double)req,
	       100.0 * reserved / (double)req, (unsigned long)rss_bytes());
	return 0;
}
