// SPDX-License-Identifier: MIT
/*
 * allocator/region/pages_cache.c - the warm cache of the region's page
 * runs: which freed runs stay committed (the budget, admission, decay),
 * in least-recently-freed order, and the reuse of a warm run merged with
 * its cold neighbours.  The run index itself is pages.c; the reasons for
 * the cache are at the top of it.  Region lock held throughout.
 */
#include "base/assert.h"
#include "base/clock.h"
#include "region/pages.h"
#include "region/pages_internal.h"

/* No warm run holds n pages: the warm run (among the SCAN_LIMIT newest)
 * that, with its cold neighbours or the frontier, holds n pages and
 * covers most of them, so a sample only faults in what the warm run
 * lacks (the page heap merges committed and released spans the same
 * way).  Returns the first page of [a, a + n), taken out of the lists
 * with the leftover cold pieces put back, or HS_PAGES_NONE. */
uint32_t hs_pages_merge_warm(uint32_t n, uint32_t *dirty, uint32_t *ndirty)
{
	uint32_t best = HS_PAGES_NONE, best_len = 0, i = 0;

	for (uint32_t w = hs_pg.lru_newest;
	     w != HS_PAGES_NONE && i < SCAN_LIMIT;
	     w = hs_pg.meta[w].older, i++) {
		uint32_t len = hs_pg.meta[w].len, e = w + len;
		uint64_t lo = w, hi = e;

		if (len >= n || len <= best_len)
			continue;
		uint32_t h = hs_pages_left_free(w, COLD);
		if (h != HS_PAGES_NONE)
			lo = h;
		if (e == hs_pg.frontier)
			/* the pages past the frontier, if the kernel
			 * backs them */
			hi = hs_pages_commit(lo + n) ? hs_pg.npages
						      : hs_pg.committed;
		else if (hs_pages_right_free(e, COLD))
			hi = (uint64_t)e + hs_pg.meta[e].len;
		if (hi - lo >= n) {
			best = w;
			best_len = len;
		}
	}
	if (best == HS_PAGES_NONE)
		return HS_PAGES_NONE;

	uint32_t w = best, e = w + best_len, h = hs_pages_left_free(w, COLD);
	uint32_t lo = h != HS_PAGES_NONE ? h : w;
	/* ends at e if the cold run on the left is long enough, else starts
	 * at its head and goes on into the cold run or frontier on the right */
	uint32_t a = e >= n && e - n >= lo ? e - n : lo;
	uint32_t start = w, end = e;
	if (a < w)
		start = h, hs_pages_unmake_free(h);
	hs_pages_unmake_free(w);
	hs_pg.recycled_pages += best_len;
	if (a + n > e) {
		if (e == hs_pg.frontier)
			hs_pg.frontier = end = a + n;
		else
			end = e + hs_pages_unmake_free(e);
	}
	/* the cold pieces left on either side go back */
	hs_pages_carve(start, end - start, a, n, COLD, 0);
	/* only the warm run's pages may hold old data: a calloc that
	 * cleared all of [a, a + n) made 8 GiB resident for a run of a few
	 * warm pages beside cold ones */
	uint32_t dlo = w > a ? w : a, dhi = e < a + n ? e : a + n;
	*dirty = dlo - a;
	*ndirty = dhi > dlo ? dhi - dlo : 0;
	return a;
}

/* Keep [s, s + len) (not in any list, still committed) as the newest
 * warm run, merged with warm neighbours. */
static void keep_warm(uint32_t s, uint32_t len, uint32_t now)
{
	uint32_t h = hs_pages_left_free(s, WARM), e = s + len;

	if (h != HS_PAGES_NONE) {
		len += hs_pages_unmake_free(h);
		s = h;
	}
	if (hs_pages_right_free(e, WARM))
		len += hs_pages_unmake_free(e);
	hs_pages_make_free(s, len, WARM, now);
}

void hs_pages_evict_oldest(void)
{
	uint32_t s = hs_pg.lru_oldest;

	hs_pages_release_cold(s, hs_pages_unmake_free(s));
}

/* The warm budget: HEAPSCOPE_SAMPLED_CACHE or twice the pages in use
 * (samples and large blocks), whichever is more (the page heap keeps free
 * memory the same way: a few large blocks per thread need more than a
 * fixed 64 MiB between them), none when the option is 0; and above
 * HEAPSCOPE_SAMPLED_CACHE a warm run not reused within CACHE_DECAY_MS
 * goes cold (checked on allocations and frees in the region).
 * A budget that followed the mean freed run length instead kept
 * realloc_growth from reusing its big runs (2.6x the page faults). */
#define CACHE_DECAY_MS 1000u

/* While more than HEAPSCOPE_SAMPLED_CACHE is kept (the budget grew with
 * the pages in use), warm runs older than CACHE_DECAY_MS go cold, oldest
 * first; up to HEAPSCOPE_SAMPLED_CACHE stays, as the page heap keeps its
 * HEAPSCOPE_RELEASE_RATE floor: the region also holds large unsampled
 * blocks, and a program that frees and reallocates a big buffer every
 * few seconds would fault it in again each time.  A scan of the LRU list
 * (pieces cut from a run keep its time but go to the newest end), at
 * most every CACHE_DECAY_MS / 4. */
static uint32_t last_decay;
void hs_pages_decay(uint32_t now)
{
	if (now - last_decay < CACHE_DECAY_MS / 4)
		return;
	last_decay = now;
	for (uint32_t s = hs_pg.lru_oldest, next;
	     s != HS_PAGES_NONE && hs_pg.warm_pages > hs_pg.warm_limit;
	     s = next) {
		next = hs_pg.meta[s].newer;
		if (now - hs_pg.meta[s].freed_ms > CACHE_DECAY_MS)
			hs_pages_release_cold(s, hs_pages_unmake_free(s));
	}
}

uint64_t hs_pages_cache_limit(void)
{
	if (hs_pg.warm_limit == 0) /* HEAPSCOPE_SAMPLED_CACHE=0: no cache */
		return 0;
	return 2 * hs_pg.in_use > hs_pg.warm_limit ? 2 * hs_pg.in_use
						   : hs_pg.warm_limit;
}

/* Moving mean of the run lengths samples asked for (x16, weight 1/16).
 * A freed run more than ADMIT_FACTOR times as long (and over 2 MiB) is
 * not cached: no sample is likely to want it before it decays, and it
 * would sit on top of the heap's growth (sqlite3: a one-off 8 MiB
 * sampled block kept resident raised its peak RSS by 8 MiB). */
#define ADMIT_FACTOR 64
#define ADMIT_MIN_PAGES 256

static bool admit(uint32_t n)
{
	return n <= ADMIT_MIN_PAGES ||
	       (uint64_t)n * 16 <= ADMIT_FACTOR * hs_pg.asked_len16;
}

/* The old copy of a block realloc moved to fresh pages goes cold at
 * once (hs_region_free_moved): a buffer that doubles by realloc past its
 * neighbours (perl's hashes: 128 KiB ... 4 MiB) left each old copy warm,
 * no block of those sizes came again, and they sat resident beside the
 * new copies up to the peak (perl's text workload in
 * bench/real_programs.sh: peak RSS 90.4 -> 87.2 MiB, median of 5
 * interleaved runs, glibc 89.9; 9 % more minor faults).  A new copy that
 * took a kept run keeps the old one warm: bench/realloc_growth, buffers
 * grown from small again and again, faulted 11x as often when every old
 * copy went cold.  Other warm runs are left alone: sending back as many
 * as each fresh allocation faults in (the page heap's swap on fault-in)
 * made mimalloc-bench's malloc-large, random 5-25 MiB blocks freed and
 * allocated again, 2.9x slower (1.27x counting only runs kept 100 ms or
 * more). */
HS_TLS bool hs_pages_moved_copy;

void hs_pages_free(uint32_t page)
{
	uint32_t n = hs_pg.meta[page].len;

	hs_assert(page < hs_pg.frontier && hs_pg.meta[page].tag == TAG_USED);
	hs_pages_clear_huge(page);
	hs_pg.meta[page] = (struct page_meta){0};
	hs_pg.in_use -= n;
	uint64_t limit = hs_pages_cache_limit();
	if (n > limit || !admit(n) || hs_pages_moved_copy) {
		hs_pages_release_cold(page, n);
		return;
	}
	uint32_t now = hs_clock_coarse_ms();
	keep_warm(page, n, now);
	while (hs_pg.warm_pages > limit)
		hs_pages_evict_oldest();
	hs_pages_decay(now);
}

uint64_t hs_pages_cached(void)
{
	return hs_pg.warm_pages;
}

uint64_t hs_pages_recycled(void)
{
	return hs_pg.recycled_pages;
}
