/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/page_grow.c - the page heap's growth: new OS memory, from
 * 64 MiB chunks of address space committed 2 MiB at a time, or a mapping
 * of its own for a request larger than a chunk; it enters the free lists
 * (page_heap.c) as a released span.  Page heap lock held throughout.
 */
#include <stdbool.h>
#include <stdint.h>

#include "base/os.h"
#include "base/stats.h"
#include "core/page_heap.h"
#include "core/page_heap_internal.h"
#include "core/pagemap.h"

/* The standard chunk being grown: HS_HEAP_CHUNK of address space, made
 * writable 2 MiB steps at a time as the heap needs it (a 64 MiB chunk
 * mapped writable at once cost every process 64 MiB of CommitLimit under
 * strict overcommit, for a heap of a few KiB). */
static hs_lazy_t chunk;

/* New memory [m, m + bytes) enters the heap as a released span. */
static bool add_memory_locked(char *m, size_t bytes)
{
	hs_span_t *s = hs_span_new();
	if (!s)
		return false;
	hs_stat_add(HS_STAT_system_bytes, (int64_t)bytes);
	s->start = (uintptr_t)m >> HS_PAGE_SHIFT;
	s->npages = bytes >> HS_PAGE_SHIFT;
	/* merges with the chunk's tail */
	hs_ph_free_locked(s, HS_SPAN_RELEASED);
	return true;
}

/* Gets OS memory for at least npages pages.  false on ENOMEM.  The
 * memory is mapped or committed first, accounted (hs_os_alloc,
 * hs_lazy_commit): a request the kernel's overcommit policy would not
 * back fails there, in a few microseconds, before a span or a pagemap
 * node exists. */
bool hs_ph_grow_locked(size_t npages)
{
	if (npages > ((size_t)1 << HS_PM_BITS))
		return false;
	const size_t huge = (size_t)2 << 20;
	size_t bytes = ((npages << HS_PAGE_SHIFT) + huge - 1) & ~(huge - 1);
	if (bytes > HS_HEAP_CHUNK) {
		/* A mapping of its own for one large request, 2 MiB
		 * aligned; huge pages when they are on (page_huge.c). */
		char *m = hs_os_alloc(bytes, huge);
		if (!m)
			return false;
		hs_ph_huge_own_locked(m, bytes);
		if (!hs_pagemap_ensure((uintptr_t)m >> HS_PAGE_SHIFT,
				       bytes >> HS_PAGE_SHIFT) ||
		    !add_memory_locked(m, bytes)) {
			hs_os_unmap(m, bytes);
			return false;
		}
		return true;
	}
	if (!chunk.base || chunk.size - chunk.committed < bytes) {
		hs_lazy_t c;
		if (hs_lazy_init(&c, HS_HEAP_CHUNK, huge))
			return false;
		if (!hs_pagemap_ensure((uintptr_t)c.base >> HS_PAGE_SHIFT,
				       HS_HEAP_CHUNK >> HS_PAGE_SHIFT)) {
			hs_os_unmap(c.base, c.size);
			return false;
		}
		/* the old chunk's never-used tail is address space only */
		if (chunk.base)
			hs_os_unmap(chunk.base + chunk.committed,
				    chunk.size - chunk.committed);
		chunk = c;
	}
	char *m = chunk.base + chunk.committed;
	if (hs_lazy_commit(&chunk, chunk.committed + bytes, huge))
		return false;
	hs_ph_huge_commit_locked(m, bytes, chunk.base + chunk.size);
	if (!add_memory_locked(m, bytes)) {
		/* committed, not in the heap: the next grow adds it */
		chunk.committed -= bytes;
		return false;
	}
	return true;
}
