/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/pagemap.c - creation and update of the page -> span radix
 * tree (lookups are inline in pagemap.h).
 */
#include <string.h>

#include "base/assert.h"
#include "base/os.h"
#include "core/pagemap.h"
#include "sampling.h"

#define PM_OS_PAGE 4096
#define PM_PER_OS_PAGE (PM_OS_PAGE / sizeof(uintptr_t))	     /* 512 */
#define PM_LEAF_OS_PAGES (sizeof(hs_pm_leaf_t) / PM_OS_PAGE) /* 64 */

/* Leaves come from hs_meta_alloc, which page-aligns them. */
_Static_assert(sizeof(hs_pm_leaf_t) % PM_OS_PAGE == 0,
	       "pagemap leaves are not whole 4 KiB pages");

char *hs_pm_base;
uintptr_t hs_pm_nroot;

#define PM_MAP_BYTES                                                           \
	(HS_PM_ROOT_OFFSET +                                                   \
	 sizeof(hs_pm_node_t) * ((size_t)1 << HS_PM_ROOT_BITS))
#define PM_ROOT_OS_PAGES                                                       \
	(((size_t)1 << HS_PM_ROOT_BITS) / PM_PER_OS_PAGE) /* 1024 */

/* Which root pages are writable; under the page heap lock. */
static uint64_t root_writable[PM_ROOT_OS_PAGES / 64];

/* Lowest and highest root slot with a leaf, lo > hi while there is none;
 * under the page heap lock.  Trim visits only the root slots in between:
 * reading all of the root would make its 4 MiB resident. */
static uintptr_t leaf_lo = UINTPTR_MAX, leaf_hi;

/* Maps the empty leaf and the root, read-only, and publishes them. */
static bool map_pagemap(void)
{
	char *m = hs_os_map_readonly(PM_MAP_BYTES);
	if (!m)
		return false;
	__atomic_store_n(&hs_pm_base, m, __ATOMIC_RELAXED);
	/* release: a reader that sees the full root sees the new base */
	__atomic_store_n(&hs_pm_nroot, (uintptr_t)1 << HS_PM_ROOT_BITS,
			 __ATOMIC_RELEASE);
	return true;
}

/* Makes the root page holding slot ri writable. */
static bool root_slot_writable(uintptr_t ri)
{
	size_t pg = ri / PM_PER_OS_PAGE;
	if (root_writable[pg / 64] & (1ULL << (pg % 64)))
		return true;
	char *at = (char *)hs_pm_root(hs_pm_base) + pg * PM_OS_PAGE;
	if (hs_os_make_writable(at, PM_OS_PAGE) != 0)
		return false;
	root_writable[pg / 64] |= 1ULL << (pg % 64);
	return true;
}

bool hs_pagemap_ensure(uintptr_t page, size_t n)
{
	const uintptr_t pages = (uintptr_t)1 << HS_PM_BITS;
	if (page > pages || n > pages - page)
		return false; /* [page, page + n) must end by 2^HS_PM_BITS */
	if (n == 0)
		return true;
	if (!hs_pm_nroot && !map_pagemap())
		return false;
	hs_pm_node_t *root = hs_pm_root(hs_pm_base);
	uintptr_t last = (page + n - 1) >> HS_PM_LEAF_BITS;
	for (uintptr_t ri = page >> HS_PM_LEAF_BITS; ri <= last; ri++) {
		if (root[ri] != 0)
			continue;
		if (!root_slot_writable(ri))
			return false;
		/* fresh metadata pages are zero: every entry empty; only
		 * the pages that get entries are ever touched */
		hs_pm_leaf_t *leaf = hs_meta_alloc(sizeof(*leaf));
		if (!leaf)
			return false;
		__atomic_store_n(&root[ri],
				 (uintptr_t)leaf - (uintptr_t)hs_pm_base,
				 __ATOMIC_RELEASE);
		if (ri < leaf_lo)
			leaf_lo = ri;
		if (ri > leaf_hi)
			leaf_hi = ri;
	}
	return true;
}

/* The leaf entry of `page`, whose leaf exists (hs_pagemap_ensure). */
static uintptr_t *slot_of(uintptr_t page)
{
	hs_pm_leaf_t *leaf = hs_pm_leaf_of(
		hs_pm_base, hs_pm_root(hs_pm_base)[page >> HS_PM_LEAF_BITS]);
	return &leaf->entry[page & ((1 << HS_PM_LEAF_BITS) - 1)];
}

void hs_pagemap_set(uintptr_t page, hs_span_t *span)
{
	/* free's fast path relies on it (core/free.h) */
	hs_assert_internal(!span ||
			   !hs_is_sampled((void *)(page << HS_PAGE_SHIFT)));
	hs_assert_internal(!((uintptr_t)span &
			     ~(HS_PM_SPAN_MASK & ~HS_PM_SHARD_MASK)));
	__atomic_store_n(slot_of(page), (uintptr_t)span, __ATOMIC_RELEASE);
}

/* Stores e into the entries of pages [page, page + n), whose leaves
 * exist: a span's pages are in one or two leaves, so the slot is found
 * again only where a leaf ends (a lookup per page cost ~8 instructions
 * of an 8-page span's ~12 per page). */
static void set_run(uintptr_t page, size_t n, uintptr_t e)
{
	uintptr_t end = page + n;
	while (page < end) {
		uintptr_t *slot = slot_of(page);
		uintptr_t stop = (page | ((1 << HS_PM_LEAF_BITS) - 1)) + 1;
		if (stop > end)
			stop = end;
		for (; page < stop; page++, slot++) {
			hs_assert_internal(
				!e || !hs_is_sampled(
					      (void *)(page << HS_PAGE_SHIFT)));
			__atomic_store_n(slot, e, __ATOMIC_RELEASE);
		}
	}
}

void hs_pagemap_set_range(hs_span_t *span, unsigned cls)
{
	/* span objects are 64-byte aligned: the shard bits are free */
	hs_assert_internal(!((uintptr_t)span &
			     ~(HS_PM_SPAN_MASK & ~HS_PM_SHARD_MASK)));
	uintptr_t e = (uintptr_t)span | (uintptr_t)cls << HS_PM_CLASS_SHIFT;
	if (cls)
		e |= span->shard & HS_PM_SHARD_MASK;
	set_run(span->start, span->npages, e);
}

void hs_pagemap_clear_range(uintptr_t page, size_t n)
{
	set_run(page, n, 0);
}

void hs_pagemap_set_class(hs_span_t *span, unsigned cls)
{
#if HS_DEBUG >= 2
	for (size_t i = 0; i < span->npages; i++)
		hs_assert_internal(hs_pagemap_get(span->start + i) == span);
#endif
	hs_pagemap_set_range(span, cls);
}

/* Entry of page `page` pointing at s is one the page heap relies on.
 * The page heap keeps only entries it needs (page_heap.c: every page of
 * a small span, the edges of the others), so any entry naming a live
 * span that covers the page is kept; the test does not look at
 * size_class, which a new small span gets after its entries are set. */
static bool entry_needed(const hs_span_t *s, uintptr_t page)
{
	if (!s)
		return false;
	switch (s->location) {
	case HS_SPAN_IN_USE:
	case HS_SPAN_FREE:
	case HS_SPAN_RELEASED:
		return page >= s->start && page - s->start < s->npages;
	default:
		return false; /* deleted span object */
	}
}

/* Gives back the pending run [*run, *run + *len) of leaf pages. */
static void flush_run(char **run, size_t *len)
{
	if (*len)
		hs_os_decommit(*run, *len);
	*run = NULL;
	*len = 0;
}

/* The leaf of root slot ri, NULL for none; with vec[] set to which of
 * its 4 KiB pages are resident.  A page that is not holds no entry
 * (never written, or given back) or is swapped out: trim and the
 * checker skip it rather than read it, which would make a never-used
 * page resident. */
static hs_pm_leaf_t *leaf_pages(uintptr_t ri, unsigned char *vec)
{
	hs_pm_leaf_t *leaf =
		hs_pm_leaf_of(hs_pm_base, hs_pm_root(hs_pm_base)[ri]);
	if (leaf == (hs_pm_leaf_t *)hs_pm_base)
		return NULL;
	if (hs_os_resident(leaf, PM_LEAF_OS_PAGES, vec) != 0)
		memset(vec, 1, PM_LEAF_OS_PAGES); /* cannot tell: read all */
	return leaf;
}

size_t hs_pagemap_trim(void)
{
	size_t done = 0, len = 0;
	char *run = NULL; /* adjacent leaf pages go in one madvise */
	unsigned char vec[PM_LEAF_OS_PAGES];
	for (uintptr_t li = leaf_lo; li <= leaf_hi; li++) {
		hs_pm_leaf_t *leaf = leaf_pages(li, vec);
		if (!leaf)
			continue;
		uintptr_t base = li << HS_PM_LEAF_BITS;
		for (size_t pg = 0; pg < PM_LEAF_OS_PAGES; pg++) {
			char *at = (char *)&leaf->entry[pg * PM_PER_OS_PAGE];
			if (!(vec[pg] & 1)) {
				flush_run(&run, &len);
				continue;
			}
			bool used = false, needed = false;
			for (size_t j = pg * PM_PER_OS_PAGE;
			     j < (pg + 1) * PM_PER_OS_PAGE; j++) {
				hs_span_t *s = hs_pm_entry_span(leaf->entry[j]);
				used |= s != NULL;
				if (entry_needed(s, base + j)) {
					needed = true;
					break;
				}
			}
			if (needed) {
				flush_run(&run, &len);
				continue;
			}
			/* all-NULL pages too: they are resident */
			if (used)
				done += PM_OS_PAGE;
			if (run && run + len != at)
				flush_run(&run, &len);
			if (!run)
				run = at;
			len += PM_OS_PAGE;
		}
	}
	flush_run(&run, &len);
	return done;
}

int hs_pagemap_is_valid(void)
{
	unsigned char vec[PM_LEAF_OS_PAGES];
	for (uintptr_t li = leaf_lo; li <= leaf_hi; li++) {
		hs_pm_leaf_t *leaf = leaf_pages(li, vec);
		if (!leaf)
			continue;
		for (uintptr_t j = 0; j < (1 << HS_PM_LEAF_BITS); j++) {
			if (!(vec[j / PM_PER_OS_PAGE] & 1)) {
				j += PM_PER_OS_PAGE - 1; /* skip the page */
				continue;
			}
			uintptr_t e = leaf->entry[j];
			const hs_span_t *s = hs_pm_entry_span(e);
			uintptr_t page = (li << HS_PM_LEAF_BITS) + j;
			if (!s)
				continue;
			if (!entry_needed(s, page))
				return 0; /* stale: a deleted or other span */
			bool edge = page == s->start ||
				    page == s->start + s->npages - 1;
			if (!edge && (s->location != HS_SPAN_IN_USE ||
				      s->size_class == 0))
				return 0; /* interior of a large/free span */
			if (hs_pm_entry_class(e) &&
			    (hs_pm_entry_class(e) != s->size_class ||
			     s->location != HS_SPAN_IN_USE))
				return 0; /* a class the span does not have */
		}
	}
	return 1;
}
