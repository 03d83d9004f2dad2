/* SPDX-License-Identifier: MIT */
/*
 * allocator/region/region.h - the sampled region: one reservation of
 * address space whose pages hold every sample and the large blocks the
 * region serves (region.c), its lock, and the lookup of a pointer in it.
 * Used by the sampling side and by the region's large blocks
 * (region/blocks.c); the core sees the region only through
 * allocator/sampling.h (hs_is_sampled).
 *
 * Locking: one lock, the region lock (region/lock.h: spin, yield, then
 * futex), serialises the page runs
 * (region/pages.h), the registry writers and the sessions' tables: every
 * function of this folder but hs_region_reserve and the lock's own runs
 * with it held.
 */
#ifndef HS_REGION_H
#define HS_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"
#include "region/pages.h"

/* Largest alignment a block of the region can have (the region's own). */
#define HS_REGION_ALIGN ((size_t)1 << 30)

/* The tag of a run that holds a large block of the region, not a sample
 * (samples' runs carry their registry slot, below the registry's
 * capacity; HS_PAGES_NONE is "no run"). */
#define HS_REGION_PLAIN (HS_PAGES_NONE - 1)

/*
 * Reserve the region (256 GiB of address space, PROT_NONE until used,
 * smaller when refused, down to 1 GiB; MADV_NOHUGEPAGE on the whole of
 * it, so sampling splits no VMA but around a sample over
 * HS_REGION_HUGE_MIN, hs_pages_set_huge).  Not yet in use: hs_region_start does
 * that.  0 or -ENOMEM.  Start-up only (hs_sampling_init).
 */
int hs_region_reserve(void);

/*
 * Set up the page runs of the reserved region, keeping up to cache_bytes
 * of freed pages committed, and publish it: from then on hs_is_sampled()
 * sees it.  cached_mirror: a word that hs_region_publish_cache keeps
 * equal to the committed cache's bytes (the registry header's
 * cached_bytes, read by collectors), or NULL.  0 or -ENOMEM (the region
 * is unmapped).  Start-up only.
 */
int hs_region_start(uint64_t cache_bytes, uint64_t *cached_mirror);

/* The region [hs_sampled_start, + hs_sampled_size), defined here;
 * allocator/sampling.h declares them too, for the core's one compare
 * (hs_is_sampled).  Size 0 until hs_region_start succeeded. */
extern HS_HIDDEN uintptr_t hs_sampled_start;
extern HS_HIDDEN uintptr_t hs_sampled_size;

/* The region lock (see above); the fork handlers take it first and
 * release it last.  Thread-safe. */
void hs_region_lock(void);
void hs_region_unlock(void);
void hs_region_fork_prepare(void);
void hs_region_fork_parent(void);
void hs_region_fork_child(void);

/* Lock held.  The tag of the run starting at p (a registry slot or
 * HS_REGION_PLAIN), its first page in *page; HS_PAGES_NONE when p does
 * not start a run in use. */
uint32_t hs_region_lookup(const void *p, uint32_t *page);

/* The address of page `page` of the region. */
static inline void *hs_region_addr(uint32_t page)
{
	return (void *)(hs_sampled_start + ((uintptr_t)page << HS_PAGE_SHIFT));
}

/* Lock held, after any change of the page runs: publish the page cache's
 * figures (cached_bytes, recycled_bytes_total; the cached mirror). */
void hs_region_publish_cache(void);

/* Lock held (malloc_trim): decommit every cached run and the page index
 * past the frontier.  Returns the bytes released. */
size_t hs_region_trim_locked(void);

/* ---- blocks.c: the large unsampled blocks of the region ---- */

/* Largest unsampled block placed in the region (bytes,
 * HEAPSCOPE_REGION_BLOCK_MAX); 0 = none. */
size_t hs_region_block_max(void);

/* Blocks over this many bytes that the page heap serves get a mapping of
 * their own, with transparent huge pages when HEAPSCOPE_HUGEPAGE_AFTER is
 * not negative (core/page_grow.c, page_huge.c: requests over
 * HS_HEAP_CHUNK, 64 MiB). */
#define HS_REGION_HUGE_MIN ((size_t)64 << 20)

/* Does a sample of n bytes get transparent huge pages
 * (hs_pages_set_huge)?  Those an unsampled block of its size would get:
 * over hs_region_block_max() (it would be in the page heap), over
 * HS_REGION_HUGE_MIN (in a mapping of its own there) and with
 * HEAPSCOPE_HUGEPAGE_AFTER not negative (huge pages on; off by
 * default, core/page_huge.c says why). */
bool hs_region_wants_huge(size_t n);

/* Pages of a block of n bytes (n <= hs_region_block_max()). */
static inline uint32_t hs_region_pages_for(size_t n)
{
	return (uint32_t)((n + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT);
}

/* Lock held.  The large block on the run at page (all its pages) enters
 * (sign 1) or leaves (-1) the heap's large-block figures: the region is
 * the pool that serves it (hs_stat_large). */
void hs_region_block_account(uint32_t page, int sign);

/* Lock held.  hs_pages_extend() of the run at page tagged slot.  A plain
 * run's old length leaves the large-block figures when it grows (the
 * caller accounts the new length if the run stays plain). */
bool hs_region_extend(uint32_t page, uint32_t slot, uint32_t n);

/* Lock held.  Free the large block on the run at page (a plain run). */
void hs_region_block_free_locked(uint32_t page);

#endif /* HS_REGION_H */
