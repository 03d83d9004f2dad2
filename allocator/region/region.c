// SPDX-License-Identifier: MIT
/*
 * allocator/region/region.c - the sampled region and its lock.
 *
 * The region is reserved once (256 GiB of address space, PROT_NONE,
 * MADV_NOHUGEPAGE on the whole of it) and made writable front to back as
 * it is used (region/pages.c), so it is at most two VMAs (and two more
 * per live sample over 64 MiB, which gets transparent huge pages as the
 * page heap would give it: hs_pages_set_huge), strict overcommit charges
 * only what was used, and the kernel refuses a block it could not back;
 * free recognises a pointer in it with one compare (hs_is_sampled) once
 * the pagemap, which never holds the region's pages, found no span.
 * Every block in it owns whole 8 KiB pages (region/pages.c) and
 * starts at its first page; freed pages stay committed in a bounded
 * cache and are reused first.  Two kinds of blocks share those pages:
 * samples (sampling/sample.c; their runs carry a registry slot) and the
 * large unsampled blocks the region serves (region/blocks.c; their runs
 * carry HS_REGION_PLAIN).
 *
 * Locking: one lock (region/lock.h: spin, yield, then futex) serialises
 * the page runs, the registry writers, the statistics they publish and
 * the sessions' tables.  Unwinding, proxies
 * and the sample_alloc probe happen outside it; sample_free fires inside
 * it, before the pages can be handed out again.
 */
#include <errno.h>

#include "base/os.h"
#include "base/stats.h"
#include "region/lock.h"
#include "region/region.h"

#define REGION_MAX ((size_t)256 << 30)
#define REGION_MIN ((size_t)1 << 30)

_Static_assert((HS_REGION_ALIGN & (HS_REGION_ALIGN - 1)) == 0 &&
		       HS_REGION_ALIGN >= HS_PAGE_SIZE &&
		       REGION_MIN % HS_REGION_ALIGN == 0,
	       "the region is aligned to its largest block alignment");

uintptr_t hs_sampled_start;
uintptr_t hs_sampled_size;

static hs_word_lock_t lock = HS_WORD_LOCK_INIT; /* region/lock.h */
static void *reserved; /* hs_region_reserve's result */
static size_t reserved_size;
static uint64_t *cached_mirror; /* see hs_region_start */

int hs_region_reserve(void)
{
	size_t size;
	void *region = NULL;

	/* 256 GiB of address space costs nothing (PROT_NONE, committed as
	 * used); shrink when the address space (RLIMIT_AS) refuses it. */
	for (size = REGION_MAX; size >= REGION_MIN; size >>= 2) {
		region = hs_os_reserve(size, HS_REGION_ALIGN);
		if (region)
			break;
	}
	if (!region)
		return -ENOMEM;
	hs_os_nohugepage(region, size);
	reserved = region;
	reserved_size = size;
	return 0;
}

int hs_region_start(uint64_t cache_bytes, uint64_t *mirror)
{
	if (!reserved)
		return -ENOMEM;
	if (hs_pages_init((uintptr_t)reserved,
			  (uint32_t)(reserved_size >> HS_PAGE_SHIFT),
			  cache_bytes >> HS_PAGE_SHIFT)) {
		hs_os_unmap(reserved, reserved_size);
		reserved = NULL;
		return -ENOMEM;
	}
	cached_mirror = mirror;
	hs_stat_set(HS_STAT_region_bytes, (int64_t)reserved_size);
	hs_sampled_start = (uintptr_t)reserved;
	__atomic_store_n(&hs_sampled_size, reserved_size, __ATOMIC_RELEASE);
	return 0;
}

void hs_region_lock(void)
{
	hs_word_lock(&lock);
}

void hs_region_unlock(void)
{
	hs_word_unlock(&lock);
}

void hs_region_fork_prepare(void)
{
	hs_word_lock(&lock);
}

void hs_region_fork_parent(void)
{
	hs_word_unlock(&lock);
}

void hs_region_fork_child(void)
{
	/* the child has one thread, the one that forked and held the lock;
	 * no other thread of it sleeps on the word */
	hs_word_lock_init(&lock);
}

uint32_t hs_region_lookup(const void *p, uint32_t *page)
{
	uintptr_t off = (uintptr_t)p - hs_sampled_start;

	if (off >= hs_sampled_size || (off & (HS_PAGE_SIZE - 1)))
		return HS_PAGES_NONE;
	*page = (uint32_t)(off >> HS_PAGE_SHIFT);
	return hs_pages_slot(*page);
}

void hs_region_publish_cache(void)
{
	uint64_t cached = hs_pages_cached() << HS_PAGE_SHIFT;

	hs_stat_set(HS_STAT_cached_bytes, (int64_t)cached);
	hs_stat_set(HS_STAT_recycled_bytes_total,
		    (int64_t)(hs_pages_recycled() << HS_PAGE_SHIFT));
	if (cached_mirror)
		__atomic_store_n(cached_mirror, cached, __ATOMIC_RELAXED);
}

size_t hs_region_trim_locked(void)
{
	uint64_t pages = hs_pages_trim();

	hs_region_publish_cache();
	return (size_t)(pages << HS_PAGE_SHIFT);
}
