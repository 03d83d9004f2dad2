/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/pagemap.c - creation and update of the page -> span radix
 * tree (lookups are inline in pagemap.h).
 */
#include "base/assert.h"
#include "base/os.h"
#include "core/pagemap.h"
#include "sampling.h"

#define PM_OS_PAGE 4096
#define PM_PER_OS_PAGE (PM_OS_PAGE / sizeof(uintptr_t)) /* 512 */

/* Leaves come from hs_meta_alloc, which page-aligns them. */
_Static_assert(sizeof(hs_pm_leaf_t) % PM_OS_PAGE == 0,
	       "pagemap leaves are not whole 4 KiB pages");

_Static_assert(sizeof(hs_pm_mid_t) == sizeof(hs_pm_leaf_t),
	       "the empty interior node is the empty leaf too");
hs_pm_mid_t hs_pm_empty_mid;
extern hs_pm_leaf_t hs_pm_empty_leaf __attribute__((alias("hs_pm_empty_mid")));
hs_pm_node_t hs_pagemap_root[1 << HS_PM_ROOT_BITS];

/* Lowest and highest leaf number (page >> HS_PM_LEAF_BITS) with a leaf,
 * lo > hi while there is none; under the page heap lock.  Trim visits
 * only the root and interior slots in between: reading all 4096 root
 * slots and 2048 slots of each interior node made their pages resident
 * (32 KiB of root for a heap in one 32 GiB range). */
static uintptr_t leaf_lo = UINTPTR_MAX, leaf_hi;

bool hs_pagemap_ensure(uintptr_t page, size_t n)
{
	if ((page + n) >> HS_PM_BITS)
		return false;
	uintptr_t last = page + n - 1;
	for (uintptr_t p = page; p <= last;) {
		size_t ri = p >> (HS_PM_LEAF_BITS + HS_PM_MID_BITS);
		hs_pm_mid_t *mid = hs_pm_mid_of(hs_pagemap_root[ri]);
		if (mid == &hs_pm_empty_mid) {
			/* fresh metadata pages are zero: every slot empty */
			mid = hs_meta_alloc(sizeof(*mid));
			if (!mid)
				return false;
			__atomic_store_n(&hs_pagemap_root[ri],
					 (uintptr_t)mid -
						 (uintptr_t)&hs_pm_empty_mid,
					 __ATOMIC_RELEASE);
		}
		size_t mi =
			(p >> HS_PM_LEAF_BITS) & ((1 << HS_PM_MID_BITS) - 1);
		if (mid->leaf[mi] == 0) {
			hs_pm_leaf_t *leaf = hs_meta_alloc(sizeof(*leaf));
			if (!leaf)
				return false;
			__atomic_store_n(&mid->leaf[mi],
					 (uintptr_t)leaf -
						 (uintptr_t)&hs_pm_empty_leaf,
					 __ATOMIC_RELEASE);
			uintptr_t li = p >> HS_PM_LEAF_BITS;
			if (li < leaf_lo)
				leaf_lo = li;
			if (li > leaf_hi)
				leaf_hi = li;
		}
		/* next leaf boundary */
		p = (p | ((1 << HS_PM_LEAF_BITS) - 1)) + 1;
	}
	return true;
}

/* The leaf entry of `page`, whose nodes exist (hs_pagemap_ensure). */
static uintptr_t *slot_of(uintptr_t page)
{
	hs_pm_mid_t *mid = hs_pm_mid_of(
		hs_pagemap_root[page >> (HS_PM_LEAF_BITS + HS_PM_MID_BITS)]);
	hs_pm_leaf_t *leaf =
		hs_pm_leaf_of(mid->leaf[(page >> HS_PM_LEAF_BITS) &
					((1 << HS_PM_MID_BITS) - 1)]);
	return &leaf->entry[page & ((1 << HS_PM_LEAF_BITS) - 1)];
}

void hs_pagemap_set(uintptr_t page, hs_span_t *span)
{
	/* free's fast path relies on it (core/free.h) */
	hs_assert_internal(!span ||
			   !hs_is_sampled((void *)(page << HS_PAGE_SHIFT)));
	hs_assert_internal(!((uintptr_t)span & ~HS_PM_SPAN_MASK));
	__atomic_store_n(slot_of(page), (uintptr_t)span, __ATOMIC_RELEASE);
}

void hs_pagemap_set_range(hs_span_t *span)
{
	for (size_t i = 0; i < span->npages; i++)
		hs_pagemap_set(span->start + i, span);
}

void hs_pagemap_set_class(hs_span_t *span, unsigned cls)
{
	uintptr_t e = (uintptr_t)span | (uintptr_t)cls << HS_PM_CLASS_SHIFT;

	for (size_t i = 0; i < span->npages; i++) {
		uintptr_t *slot = slot_of(span->start + i);
		hs_assert_internal(hs_pm_entry_span(*slot) == span);
		__atomic_store_n(slot, e, __ATOMIC_RELEASE);
	}
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

size_t hs_pagemap_trim(void)
{
	size_t done = 0, len = 0;
	char *run = NULL; /* adjacent leaf pages go in one madvise */
	for (uintptr_t li = leaf_lo; li <= leaf_hi; li++) {
		hs_pm_mid_t *mid =
			hs_pm_mid_of(hs_pagemap_root[li >> HS_PM_MID_BITS]);
		if (mid == &hs_pm_empty_mid) {
			/* on to the next interior node */
			li |= ((uintptr_t)1 << HS_PM_MID_BITS) - 1;
			continue;
		}
		hs_pm_leaf_t *leaf = hs_pm_leaf_of(
			mid->leaf[li & ((1 << HS_PM_MID_BITS) - 1)]);
		if (leaf == &hs_pm_empty_leaf)
			continue;
		uintptr_t base = li << HS_PM_LEAF_BITS;
		for (size_t i = 0; i < (1 << HS_PM_LEAF_BITS);
		     i += PM_PER_OS_PAGE) {
			bool used = false, needed = false;
			for (size_t j = i; j < i + PM_PER_OS_PAGE; j++) {
				hs_span_t *s = hs_pm_entry_span(leaf->entry[j]);
				used |= s != NULL;
				if (entry_needed(s, base + j)) {
					needed = true;
					break;
				}
			}
			char *pg = (char *)&leaf->entry[i];
			if (needed) {
				flush_run(&run, &len);
				continue;
			}
			/* all-NULL pages too: they may be resident */
			if (used)
				done += PM_OS_PAGE;
			if (run && run + len != pg)
				flush_run(&run, &len);
			if (!run)
				run = pg;
			len += PM_OS_PAGE;
		}
	}
	flush_run(&run, &len);
	return done;
}

int hs_pagemap_is_valid(void)
{
	for (uintptr_t li = leaf_lo; li <= leaf_hi; li++) {
		hs_pm_mid_t *mid =
			hs_pm_mid_of(hs_pagemap_root[li >> HS_PM_MID_BITS]);
		if (mid == &hs_pm_empty_mid) {
			li |= ((uintptr_t)1 << HS_PM_MID_BITS) - 1;
			continue;
		}
		hs_pm_leaf_t *leaf = hs_pm_leaf_of(
			mid->leaf[li & ((1 << HS_PM_MID_BITS) - 1)]);
		if (leaf == &hs_pm_empty_leaf)
			continue;
		for (uintptr_t j = 0; j < (1 << HS_PM_LEAF_BITS); j++) {
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
