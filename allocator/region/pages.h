/* SPDX-License-Identifier: MIT */
/*
 * allocator/region/pages.h - the page-run allocator of the sampled region
 * (pages.c), used by region.c, blocks.c and the sampling side.
 *
 * The region is one reservation of `npages` heapscope pages (8 KiB).
 * Every sampled allocation owns a run of whole pages; its first page is
 * the pointer returned to the caller.  A per-page index (array over the
 * region's pages, made writable with the region) maps the first page of a
 * run in use to its registry slot, so free and usable-size lookups are
 * O(1) and frees of interior, unknown or already freed pointers are
 * recognised.  All functions except hs_pages_init require the region
 * lock (region/region.h).
 */
#ifndef HS_PAGES_H
#define HS_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"

#define HS_PAGES_NONE UINT32_MAX
/* The transparent huge page of x86-64 and arm64 (4 KiB base pages). */
#define HS_HUGE_PAGE ((size_t)2 << 20)

/* Set up the allocator over [base, base + npages pages) (base aligned to
 * the largest supported alignment, 1 GiB), keeping up to cache_pages
 * freed pages committed for reuse (0: decommit every freed run at once).
 * 0 or -errno. */
int hs_pages_init(uintptr_t base, uint32_t npages, uint64_t cache_pages);

/* Allocate a run of n pages whose first page is aligned to align_pages
 * pages (power of two) and tag it with slot.  Recently freed committed
 * pages are used first (counted by hs_pages_recycled(): they may be
 * resident although the new owner never touched them); else decommitted
 * ones (not resident until touched).  Returns the first page index, or
 * HS_PAGES_NONE when the region is full.  O(log n) amortised:
 * size-bucketed free lists with a bitmap, coalescing on free. */
uint32_t hs_pages_alloc(uint32_t n, uint32_t align_pages, uint32_t slot);

/* Grow the run in use starting at page to at least n pages in place, from
 * the free run (warm or cold) or the never-used pages right after it.
 * True when the run now has >= n pages (also when it had already);
 * false, unchanged, when its right neighbour is in use or too short. */
bool hs_pages_extend(uint32_t page, uint32_t n);

/* The run in use starting at page gets transparent huge pages: its whole
 * huge pages (HS_HUGE_PAGE, 2 MiB, aligned) are advised MADV_HUGEPAGE,
 * also those it gains by hs_pages_extend, and given the region's
 * MADV_NOHUGEPAGE back when it is freed (hs_pages_clear_huge), so the
 * region's VMAs merge again.  Splits the region's VMA while the run
 * lives: only for runs as big as the page heap's own huge-page mappings
 * (hs_region_wants_huge). */
void hs_pages_set_huge(uint32_t page);
/* Undo hs_pages_set_huge (no-op for a run without it). */
void hs_pages_clear_huge(uint32_t page);

/* Tag the run in use starting at page with another registry slot. */
void hs_pages_set_slot(uint32_t page, uint32_t slot);

/* The slot of the run starting at page, or HS_PAGES_NONE when page does
 * not start a run in use (interior, free or never used). */
uint32_t hs_pages_slot(uint32_t page);

/* Pages of the run in use starting at page (valid run only). */
uint32_t hs_pages_len(uint32_t page);

/* The pages of the run in use starting at page (valid run only) that may
 * hold old data: *count pages from *first (offsets in the run); the
 * others came decommitted or never used and read as zeros until
 * written.  A run grown by hs_pages_extend keeps the answer of its first
 * part. */
void hs_pages_dirty(uint32_t page, uint32_t *first, uint32_t *count);

/* Return the run starting at page (valid run only): it stays committed
 * as the newest cached run, coalesced with cached neighbours; while the
 * cache holds more than its budget, the oldest cached run is decommitted
 * (MADV_DONTNEED) and coalesced with decommitted neighbours. */
void hs_pages_free(uint32_t page);

/* Set by the thread that frees the old copy of a block realloc moved
 * to fresh pages (hs_region_free_moved), around that free:
 * hs_pages_free then decommits the run instead of keeping it
 * (pages_cache.c says why). */
extern HS_TLS bool hs_pages_moved_copy;

/* Pages of the calling thread's last successful hs_pages_alloc or
 * hs_pages_extend that were not kept warm (never used, or decommitted):
 * what it may add to the footprint once touched; 0 for an extend within
 * the run's own pages. */
extern HS_TLS uint32_t hs_pages_fresh;

/* Decommit every cached run, and the metadata pages past the frontier
 * (malloc_trim).  Returns the cached pages released. */
uint64_t hs_pages_trim(void);

/* Pages kept committed in the cache / handed out from the cache since
 * start. */
uint64_t hs_pages_cached(void);
uint64_t hs_pages_recycled(void);

/* Walk every structure and check its invariants (tests, debug).  Returns
 * 0 when valid, else a negative code naming the failed check. */
int hs_pages_is_valid(void);

#endif /* HS_PAGES_H */
