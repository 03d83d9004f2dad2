/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/pagemap.h - radix tree from heapscope page number to span.
 *
 * Two levels cover the 47-bit user address space (2^34 pages of 8 KiB):
 * a root of 2^19 slots (4 MiB) and leaves of 2^15 entries (256 KiB,
 * 256 MiB of address space each).  The root and the all-empty leaf are
 * one read-only anonymous mapping (hs_pm_base), made writable one 4 KiB
 * root page at a time as leaves are created: a read-only private mapping
 * is not charged against the commit limit, so under strict overcommit
 * (vm.overcommit_memory=2) a process pays for the root pages it uses,
 * not 4.3 MiB of .bss.  A lookup is two dependent loads, root slot then
 * leaf entry (TCMalloc's PageMap2 shape): free's fast path took 21
 * instructions for the three levels of before, 15 for two.  Leaves come
 * from the metadata arena and are never freed; only their pages that
 * hold entries are touched, and malloc_trim gives back the 4 KiB pages
 * that hold no needed entry (hs_pagemap_trim).
 *
 * Reads are lock-free: a leaf pointer, once published, never changes.
 * Writes (hs_pagemap_set) happen under the page heap lock, after
 * hs_pagemap_ensure() created the leaves for the range.
 */
#ifndef HS_PAGEMAP_H
#define HS_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"
#include "core/size_class.h"
#include "core/span.h"

#define HS_PM_BITS (47 - HS_PAGE_SHIFT)
#define HS_PM_LEAF_BITS 15
#define HS_PM_ROOT_BITS (HS_PM_BITS - HS_PM_LEAF_BITS)

/* A leaf entry: the address of the span owning the page (0: none), with
 * the span's size class in the top 12 bits (HS_PM_CLASS_SHIFT) on the
 * pages of a small-object span that has one (hs_pagemap_set_class), so
 * free finds the class without reading the span; 0 there otherwise.
 * Span objects are user addresses below 2^47, so bits 47..51 are 0 and
 * e >> HS_PM_OFFSET_SHIFT is the class << HS_CLASS_TABLE_SHIFT, the
 * byte offset of the class's thread-cache list (thread_cache.h): free's
 * fast path adds it to the cache's address as it is. */
#define HS_PM_CLASS_SHIFT 52
#define HS_PM_OFFSET_SHIFT (HS_PM_CLASS_SHIFT - HS_CLASS_TABLE_SHIFT)
#define HS_PM_SPAN_MASK (((uintptr_t)1 << 47) - 1)
/* The low 4 bits of a small span's entries (span objects are 64-byte
 * aligned: span.h) carry the span's central-list shard, so free's fast
 * path tells an object of another shard (allocated by a thread of
 * another shard: a remote free) by one xor with the cache's shard
 * (core/free.h).  0 where the entry carries no class. */
#define HS_PM_SHARD_MASK ((uintptr_t)15)
_Static_assert(HS_NUM_CLASSES <= 1 << (64 - HS_PM_CLASS_SHIFT),
	       "a size class fits in a pagemap entry's top bits");

typedef struct hs_pm_leaf {
	uintptr_t entry[1 << HS_PM_LEAF_BITS];
} hs_pm_leaf_t;

/* Root slots hold a leaf's address minus the address of the all-empty
 * leaf: 0 is the empty leaf.  So the root starts as zeros, fresh pages
 * that no relocation or initialisation writes. */
typedef uintptr_t hs_pm_node_t;

/* The pagemap's mapping: the all-empty leaf (zeros, never written, so
 * every lookup of a page the heap never mapped ends in a NULL span with
 * no NULL test on the way), then the root.  hs_pm_nroot is the number of
 * root slots: 0 until the first leaf is created (the first malloc), so
 * lookups before then (free(NULL), a foreign pointer) read nothing, and
 * no static area is charged for the boot state. */
#define HS_PM_ROOT_OFFSET sizeof(hs_pm_leaf_t)
extern char *hs_pm_base HS_HIDDEN;
extern uintptr_t hs_pm_nroot HS_HIDDEN;

static inline hs_pm_leaf_t *hs_pm_leaf_of(const char *base, hs_pm_node_t n)
{
	return (hs_pm_leaf_t *)(base + n);
}

static inline hs_pm_node_t *hs_pm_root(const char *base)
{
	return (hs_pm_node_t *)(base + HS_PM_ROOT_OFFSET);
}

/* Leaf entry of page number `page` (span address | class << HS_PM_CLASS_SHIFT),
 * or 0 (not heap memory).  Lock-free; safe for any page number, including
 * garbage. */
static inline uintptr_t hs_pagemap_entry(uintptr_t page)
{
	uintptr_t ri = page >> HS_PM_LEAF_BITS;
	/* acquire: a reader that sees the full root sees its mapping */
	if (HS_UNLIKELY(ri >= __atomic_load_n(&hs_pm_nroot, __ATOMIC_ACQUIRE)))
		return 0;
	const char *base = hs_pm_base;
	hs_pm_leaf_t *leaf = hs_pm_leaf_of(
		base, __atomic_load_n(&hs_pm_root(base)[ri], __ATOMIC_ACQUIRE));
	/* opaque: else the compiler adds the leaf's index to base first and
	 * the slot after, one instruction more on free's fast path */
	__asm__("" : "+r"(leaf));
	return __atomic_load_n(
		&leaf->entry[page & ((1 << HS_PM_LEAF_BITS) - 1)],
		__ATOMIC_ACQUIRE);
}

static inline hs_span_t *hs_pm_entry_span(uintptr_t e)
{
	return (hs_span_t *)(e & HS_PM_SPAN_MASK & ~HS_PM_SHARD_MASK);
}

/* Central-list shard an entry carries (that of a small span in use with
 * a class; 0 otherwise). */
static inline unsigned hs_pm_entry_shard(uintptr_t e)
{
	return (unsigned)(e & HS_PM_SHARD_MASK);
}

/* Size class an entry carries; 0 for a large, free or classless span. */
static inline unsigned hs_pm_entry_class(uintptr_t e)
{
	return (unsigned)(e >> HS_PM_CLASS_SHIFT);
}

/* The same class << HS_CLASS_TABLE_SHIFT (its thread-cache list's byte
 * offset); 0 for a large, free or classless span. */
static inline size_t hs_pm_entry_list_offset(uintptr_t e)
{
	return (size_t)(e >> HS_PM_OFFSET_SHIFT);
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

/* Creates the leaves covering [page, page + n), and on first use the
 * pagemap's mapping; makes the root pages that name them writable.
 * false on ENOMEM (no mapping, or the commit limit refused a root page).
 * Caller holds the page heap lock. */
bool hs_pagemap_ensure(uintptr_t page, size_t n);

/* Maps page -> span (span may be NULL; never a page of the sampled
 * region, which free's fast path relies on: core/free.h).  Its leaf must
 * exist.  Caller holds the page heap lock. */
void hs_pagemap_set(uintptr_t page, hs_span_t *span);

/* Maps every page of span to span, with class cls (0: none) in the
 * entries (small-object spans only: a large or free span maps its first
 * and last pages, page_heap.c).  Leaves must exist.  Caller holds the
 * page heap lock, or owns the span as hs_pagemap_set_class says. */
void hs_pagemap_set_range(hs_span_t *span, unsigned cls);

/* Clears the entries of pages [page, page + n) (n may be 0); leaves
 * must exist.  Caller holds the page heap lock. */
void hs_pagemap_clear_range(uintptr_t page, size_t n);

/* Rewrites every page's entry of the small-object span `span` (its
 * pages all mapped to it: hs_pagemap_set_range) to carry class cls (0:
 * none).  The central list calls it with 0 when the span is empty,
 * before it goes back to the page heap (the class, and with it the span's
 * shard, span->shard, go in when the page heap maps the span:
 * hs_page_heap_alloc_small_n, before any object escapes).  Needs no page
 * heap lock: while
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
