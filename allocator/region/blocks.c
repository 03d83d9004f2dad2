// SPDX-License-Identifier: MIT
/*
 * allocator/region/blocks.c - the large unsampled blocks of the sampled
 * region (hs_region_alloc, over HS_MAX_SMALL_SIZE and up to
 * HEAPSCOPE_REGION_BLOCK_MAX, default 64 MiB; and hs_region_alloc_growable,
 * from HS_REGION_GROW_MIN, for blocks realloc grows): their runs carry
 * HS_REGION_PLAIN instead of a registry slot, have no record and fire no
 * probe.  Large blocks, sampled or not, then draw on one pool of pages:
 * with a separate page heap for the unsampled ones, the pages each pool
 * kept free could not serve the other, and at the default period (where
 * most blocks of a few MiB are sampled) a program's large blocks took up
 * to 1.2x the page faults and RSS of sampling off.  A large block can
 * change between sampled and unsampled on realloc without moving
 * (sampling/sample.c, sampling/sampled_free.c).
 *
 * The region is the pool that serves these blocks, so it accounts for
 * them with the one large-block call, hs_stat_large (base/stats.h).
 */
#include "base/options.h"
#include "base/stats.h"
#include "region/region.h"
#include "sampling.h"

/* Larger blocks stay in the page heap, which asks for transparent huge
 * pages for chunks of their size (the region never has them). */
size_t hs_region_block_max(void)
{
	int64_t v = hs_option_get(HS_OPT_REGION_BLOCK_MAX);
	return v > 0 ? (size_t)v : 0;
}

bool hs_region_wants_huge(size_t n)
{
	return n > HS_REGION_HUGE_MIN && n > hs_region_block_max() &&
	       hs_option_get(HS_OPT_HUGEPAGE_AFTER) >= 0;
}

void hs_region_block_account(uint32_t page, int sign)
{
	int64_t bytes = (int64_t)hs_pages_len(page) << HS_PAGE_SHIFT;

	hs_stat_large(HS_POOL_REGION, sign * bytes, sign);
}

bool hs_region_extend(uint32_t page, uint32_t slot, uint32_t n)
{
	if (slot != HS_REGION_PLAIN)
		return hs_pages_extend(page, n);
	hs_region_block_account(page, -1);
	if (hs_pages_extend(page, n))
		return true;
	hs_region_block_account(page, 1);
	return false;
}

void hs_region_free_moved(void *p, const void *q)
{
	size_t off, len;

	/* q took no kept run, only fresh pages: p's size is not asked for
	 * again, or a kept run would have served q */
	hs_pages_moved_copy = hs_region_dirty(q, &off, &len) && len == 0;
	hs_sampled_free(p, 0);
	hs_pages_moved_copy = false;
}

size_t hs_region_fresh_bytes(void)
{
	return (size_t)hs_pages_fresh << HS_PAGE_SHIFT;
}

void hs_region_block_free_locked(uint32_t page)
{
	hs_region_block_account(page, -1);
	hs_pages_free(page);
	hs_region_publish_cache();
}

static void *region_alloc(size_t n);

void *hs_region_alloc(size_t n)
{
	return n > HS_MAX_SMALL_SIZE ? region_alloc(n) : NULL;
}

void *hs_region_alloc_growable(size_t n)
{
	return n >= HS_REGION_GROW_MIN ? region_alloc(n) : NULL;
}

static void *region_alloc(size_t n)
{
	uint32_t page;

	if (n > hs_region_block_max() ||
	    !__atomic_load_n(&hs_sampled_size, __ATOMIC_ACQUIRE))
		return NULL;
	hs_region_lock();
	page = hs_pages_alloc(hs_region_pages_for(n), 1, HS_REGION_PLAIN);
	if (page != HS_PAGES_NONE) {
		hs_region_block_account(page, 1);
		hs_region_publish_cache();
	}
	hs_region_unlock();
	if (page == HS_PAGES_NONE)
		return NULL;
	return hs_region_addr(page);
}

bool hs_region_dirty(const void *p, size_t *off, size_t *len)
{
	uint32_t slot, page = 0, first = 0, count = 0;

	hs_region_lock();
	slot = hs_region_lookup(p, &page);
	if (slot != HS_PAGES_NONE)
		hs_pages_dirty(page, &first, &count);
	hs_region_unlock();
	*off = (size_t)first << HS_PAGE_SHIFT;
	*len = (size_t)count << HS_PAGE_SHIFT;
	return slot != HS_PAGES_NONE;
}
