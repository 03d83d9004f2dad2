/* SPDX-License-Identifier: MIT */
/*
 * allocator/pagemap.c - creation and update of the page -> span radix
 * tree (lookups are inline in pagemap.h).
 */
#include "pagemap.h"
#include "internal.h"

hs_pm_leaf_t hs_pm_empty_leaf;
hs_pm_mid_t hs_pm_empty_mid = {
	.leaf = {[0 ...(1 << HS_PM_MID_BITS) - 1] = &hs_pm_empty_leaf},
};
hs_pm_mid_t *hs_pagemap_root[1 << HS_PM_ROOT_BITS] = {
	[0 ...(1 << HS_PM_ROOT_BITS) - 1] = &hs_pm_empty_mid,
};

bool hs_pagemap_ensure(uintptr_t page, size_t n)
{
	if ((page + n) >> HS_PM_BITS)
		return false;
	uintptr_t last = page + n - 1;
	for (uintptr_t p = page; p <= last;) {
		size_t ri = p >> (HS_PM_LEAF_BITS + HS_PM_MID_BITS);
		hs_pm_mid_t *mid = hs_pagemap_root[ri];
		if (mid == &hs_pm_empty_mid) {
			mid = hs_meta_alloc(sizeof(*mid));
			if (!mid)
				return false;
			for (size_t i = 0; i < (1 << HS_PM_MID_BITS); i++)
				mid->leaf[i] = &hs_pm_empty_leaf;
			__atomic_store_n(&hs_pagemap_root[ri], mid,
					 __ATOMIC_RELEASE);
		}
		size_t mi =
			(p >> HS_PM_LEAF_BITS) & ((1 << HS_PM_MID_BITS) - 1);
		if (mid->leaf[mi] == &hs_pm_empty_leaf) {
			hs_pm_leaf_t *leaf = hs_meta_alloc(sizeof(*leaf));
			if (!leaf)
				return false;
			__atomic_store_n(&mid->leaf[mi], leaf,
					 __ATOMIC_RELEASE);
		}
		/* next leaf boundary */
		p = (p | ((1 << HS_PM_LEAF_BITS) - 1)) + 1;
	}
	return true;
}

void hs_pagemap_set(uintptr_t page, hs_span_t *span)
{
	hs_pm_mid_t *mid =
		hs_pagemap_root[page >> (HS_PM_LEAF_BITS + HS_PM_MID_BITS)];
	hs_pm_leaf_t *leaf = mid->leaf[(page >> HS_PM_LEAF_BITS) &
				       ((1 << HS_PM_MID_BITS) - 1)];
	__atomic_store_n(&leaf->span[page & ((1 << HS_PM_LEAF_BITS) - 1)], span,
			 __ATOMIC_RELEASE);
}

void hs_pagemap_set_range(hs_span_t *span)
{
	for (size_t i = 0; i < span->npages; i++)
		hs_pagemap_set(span->start + i, span);
}
