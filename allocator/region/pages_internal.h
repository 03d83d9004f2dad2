/* SPDX-License-Identifier: MIT */
/*
 * allocator/region/pages_internal.h - the state of the region's page runs
 * shared by pages.c (the run index) and pages_cache.c (the warm cache),
 * and the helpers each gives the other.  Private to those two files;
 * region lock held throughout.
 */
#ifndef HS_PAGES_INTERNAL_H
#define HS_PAGES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/os.h"
#include "region/pages.h"

enum { TAG_NONE = 0, TAG_USED, TAG_FREE_HEAD, TAG_FREE_TAIL };
enum { COLD = 0, WARM = 1, NKINDS = 2 };
enum { USED_HUGE = 1 }; /* kind of a TAG_USED head */

/*
 * TAG_USED:      len = pages, a = registry slot (or the caller's tag),
 *                older, newer = first page and count of the pages that
 *                may hold old data (the rest came decommitted or never
 *                used and reads as zeros); kind = USED_HUGE when its
 *                whole huge pages are advised MADV_HUGEPAGE
 *                (hs_pages_set_huge), else 0
 * TAG_FREE_HEAD: len = pages, a = next, b = prev in its bucket list;
 *                warm runs also: older / newer in the LRU list
 * TAG_FREE_TAIL: len = index of the run's head page (runs of 2+ pages)
 * TAG_NONE:      interior page, or beyond the frontier
 * kind: COLD or WARM for TAG_FREE_*, 0 otherwise.
 */
struct page_meta {
	uint16_t tag, kind;
	uint32_t len, a, b, older, newer;
	uint32_t freed_ms; /* warm head: when it was freed (coarse ms) */
};

#define NEXACT 128
#define NBUCKETS (NEXACT + 26)
#define NWORDS ((NBUCKETS + 63) / 64)
/* Runs looked at in a log bucket, and warm runs tried by the merge. */
#define SCAN_LIMIT 32

/* Committed in steps of this many bytes of region (2 MiB: one mprotect
 * per 256 pages of frontier growth) and of side array. */
#define REGION_STEP ((size_t)2 << 20)
#define META_STEP ((size_t)64 << 10)
_Static_assert(REGION_STEP % HS_PAGE_SIZE == 0 && META_STEP % 4096 == 0,
	       "commit steps are whole pages");

struct hs_pages_state {
	uintptr_t base;		   /* the region */
	uint32_t npages, frontier; /* pages; first never handed out */
	uint32_t committed; /* pages [0, committed) writable, and their meta */
	hs_lazy_t region_mem, meta_mem;
	struct page_meta *meta;	   /* [npages] */
	uint32_t bucket_head[NKINDS][NBUCKETS];
	uint64_t bitmap[NKINDS][NWORDS]; /* non-empty buckets */
	uint64_t in_use;		 /* pages of runs in use */
	uint64_t warm_pages;		 /* pages of warm runs */
	uint64_t warm_limit;		 /* HEAPSCOPE_SAMPLED_CACHE, pages */
	uint64_t recycled_pages;	 /* warm pages handed out, cumulative */
	uint32_t lru_oldest, lru_newest; /* warm runs, by time freed */
	uint64_t asked_len16;		 /* see admit() in pages_cache.c */
};

extern struct hs_pages_state hs_pg;

/* ---- pages.c ---- */

/* Make [s, s + len) a free run of kind (COLD / WARM), in its lists; t:
 * for a warm run, when its pages were freed (coarse ms). */
void hs_pages_make_free(uint32_t s, uint32_t len, unsigned kind, uint32_t t);
/* Take the free run at s out of its lists, clear its tags; its length. */
uint32_t hs_pages_unmake_free(uint32_t s);
/* Carve [a, a + n) out of the free run [s, s + len) of kind k; the rest
 * stays free, of the same kind (time t). */
void hs_pages_carve(uint32_t s, uint32_t len, uint32_t a, uint32_t n,
		    unsigned k, uint32_t t);
/* The head of the free run of kind k ending just before page s, or
 * HS_PAGES_NONE; whether a free run of kind k starts at page e. */
uint32_t hs_pages_left_free(uint32_t s, unsigned k);
bool hs_pages_right_free(uint32_t e, unsigned k);
/* Decommit [s, s + len) (in no list) and make it a cold run, merged with
 * cold neighbours or into the frontier. */
void hs_pages_release_cold(uint32_t s, uint32_t len);
/* Make pages [0, end) and their side-array entries writable.  false when
 * the kernel refuses (nothing the allocator sees changed). */
bool hs_pages_commit(uint64_t end);

/* ---- pages_cache.c ---- */

/* No warm run holds n pages: a warm run that, with its cold neighbours
 * or the frontier, does; the first page of [a, a + n), out of the lists
 * (leftovers put back), or HS_PAGES_NONE.  *dirty, *ndirty: the pages of
 * [a, a + n) that may hold old data (those of the warm run). */
uint32_t hs_pages_merge_warm(uint32_t n, uint32_t *dirty, uint32_t *ndirty);
/* Warm runs older than the decay time go cold while more than
 * HEAPSCOPE_SAMPLED_CACHE is kept; now: coarse ms. */
void hs_pages_decay(uint32_t now);
/* The warm budget in pages. */
uint64_t hs_pages_cache_limit(void);
/* Decommit the oldest warm run (it becomes cold). */
void hs_pages_evict_oldest(void);

#endif /* HS_PAGES_INTERNAL_H */
