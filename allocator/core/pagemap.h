/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/pagemap.h - radix tree from heapscope page number to span.
 *
 * Three levels cover the 47-bit user address space (2^34 pages of 8 KiB):
 * a static root of 2^12 entries, interior nodes of 2^11, leaves of 2^11
 * span pointers (16 MiB of address space per leaf).  Nodes come from the
 * metadata arena and are never freed; malloc_trim zeroes the 4 KiB leaf
 * pages that hold no needed entry (hs_pagemap_trim).
 *
 * Reads are lock-free: a node pointer, once published, never changes.
 * Writes (hs_pagemap_set) happen under the page heap lock, after
 * hs_pagemap_ensure() created the nodes for the range.
 */
#ifndef HS_PAGEMAP_H
#define HS_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"
#include "core/span.h"

#define HS_PM_BITS (47 - HS_PAGE_SHIFT)
#define HS_PM_LEAF_BITS 11
#define HS_PM_MID_BITS 11
#define HS_PM_ROOT_BITS (HS_PM_BITS - HS_PM_LEAF_BITS - HS_PM_MID_BITS)

/* A leaf entry: the address of the span owning the page (0: none), with
 * the span's size class in the top byte (HS_PM_CLASS_SHIFT) on the pages
 * of a small-object span that has one (hs_pagemap_set_class), so free
 * finds the class without reading the span; 0 there otherwise.  Span
 * objects are user addresses below 2^47. */
#define HS_PM_CLASS_SHIFT 56
#define HS_PM_SPAN_MASK (((uintptr_t)1 << HS_PM_CLASS_SHIFT) - 1)

typedef struct hs_pm_leaf {
	uintptr_t entry[1 << HS_PM_LEAF_BITS];
} hs_pm_leaf_t;

/* Interior and root slots hold a node's address minus the address of the
 * all-empty node of its level (hs_pm_node_t): 0 is the empty node.  So
 * the root and a new interior node start as zeros: .bss and fresh pages
 * that no relocation or initialisation writes, which stay out of RSS
 * (a table of 6,144 pointers to the empty nodes cost 147 KiB of
 * relocations and 48 KiB of dirty .data per process). */
typedef uintptr_t hs_pm_node_t;

typedef struct hs_pm_mid {
	hs_pm_node_t leaf[1 << HS_PM_MID_BITS];
} hs_pm_mid_t;

/* All-empty nodes: zeros, never written, so every lookup of a page the
 * heap never mapped ends in a NULL span with no NULL tests on the way.
 * The empty interior node and the empty leaf are one 16 KiB of zeros
 * under two names (offset 0 = the empty node, NULL = no span: the same
 * bytes; pagemap.c makes the leaf an alias of the interior node), so a
 * lookup of a foreign pointer (free(NULL)) reads one page of it, not
 * one of each (each page read is RSS on a kernel without a shared zero
 * page, as here).  Two names, not one: with one address the compiler
 * keeps it in a register and the free fast path takes an instruction
 * more. */
extern hs_pm_mid_t hs_pm_empty_mid;
extern hs_pm_leaf_t hs_pm_empty_leaf;
extern hs_pm_node_t hs_pagemap_root[1 << HS_PM_ROOT_BITS];

static inline hs_pm_mid_t *hs_pm_mid_of(hs_pm_node_t n)
{
	return (hs_pm_mid_t *)((uintptr_t)&hs_pm_empty_mid + n);
}

static inline hs_pm_leaf_t *hs_pm_leaf_of(hs_pm_node_t n)
{
	return (hs_pm_leaf_t *)((uintptr_t)&hs_pm_empty_leaf + n);
}

/* Leaf entry of page number `page` (span address | class << 56), or 0
 * (not heap memory).  Lock-free; safe for any page number, including
 * garbage. */
static inline uintptr_t hs_pagemap_entry(uintptr_t page)
{
	if (HS_UNLIKELY(page >> HS_PM_BITS))
		return 0;
	hs_pm_mid_t *mid = hs_pm_mid_of(__atomic_load_n(
		&hs_pagemap_root[page >> (HS_PM_LEAF_BITS + HS_PM_MID_BITS)],
		__ATOMIC_ACQUIRE));
	hs_pm_leaf_t *leaf = hs_pm_leaf_of(
		__atomic_load_n(&mid->leaf[(page >> HS_PM_LEAF_BITS) &
					   ((1 << HS_PM_MID_BITS) - 1)],
				__ATOMIC_ACQUIRE));
	return __atomic_load_n(&leaf->entry[page & ((1 << HS_PM_LEAF_BITS) - 1)],
			       __ATOMIC_ACQUIRE);
}

static inline hs_span_t *hs_pm_entry_span(uintptr_t e)
{
	return (hs_span_t *)(e & HS_PM_SPAN_MASK);
}

/* Size class an entry carries; 0 for a large, free or classless span. */
static inline unsigned hs_pm_entry_class(uintptr_t e)
{
	return (unsigned)(e >> HS_PM_CLASS_SHIFT);
}

/* Span owning page number `page`, or NULL (not heap memory).  Lock-free;
 * safe for any page number, including garbage. */
static inline hs_span_t *hs_pagemap_get(uintptr_t page)
{
	return hs_pm_entry_span(hs_pagemap_entry(page));
}

static inline hs_span_t *hs_pagemap_lookup(const void *p)
{
	return hs_pagemap_get((uintptr_t)p >> HS_PAGE_SHIFT);
}

/* Creates the nodes covering [page, page + n).  false on ENOMEM.  Caller
 * holds the page heap lock. */
bool hs_pagemap_ensure(uintptr_t page, size_t n);

/* Maps page -> span (span may be NULL; never a page of the sampled
 * region, which free's fast path relies on: core/free.h).  Nodes must
 * exist.  Caller holds the page heap lock. */
void hs_pagemap_set(uintptr_t page, hs_span_t *span);

/* Maps every page of span to span (small-object spans only: a large or
 * free span maps its first and last pages, page_heap.c). */
void hs_pagemap_set_range(hs_span_t *span);

/* Rewrites every page's entry of the small-object span `span` (its
 * pages all mapped to it: hs_pagemap_set_range) to carry class cls (0:
 * none).  The central list calls it with its class when it makes the
 * span, before any object escapes, and with 0 when the span is empty,
 * before it goes back to the page heap.  Needs no page heap lock: while
 * span is in use as a small-object span nothing else writes its entries,
 * and hs_pagemap_trim only reads them (the span they name is the same).
 * Release stores: a reader that sees the class sees what was written
 * before. */
void hs_pagemap_set_class(hs_span_t *span, unsigned cls);

/*
 * Gives back to the OS (MADV_DONTNEED) each 4 KiB page of the leaves
 * none of whose entries the page heap needs; it reads back as NULL (not
 * heap memory).  Needed: an entry naming a live span that covers its
 * page (every page of a small span, the first and last of the others).
 * Lock-free readers only look up memory they own (needed) or garbage,
 * for which NULL is the right answer.  Result: bytes given back.  Caller
 * holds the page heap lock (hs_page_heap_lock).
 */
size_t hs_pagemap_trim(void);

/* Checker for tests: 1 if every non-NULL entry names a live span that
 * covers its page, and only small-object spans map pages other than
 * their first and last.  Caller holds the page heap lock or knows no
 * other thread allocates (a new small span is briefly size_class 0). */
int hs_pagemap_is_valid(void);

#endif /* HS_PAGEMAP_H */
