/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/page_heap.h - the page heap: free spans by length, memory
 * from the OS in large reservations, coalescing, and the release policy.
 * One mutex guards everything here (lock order: central free list lock,
 * then page heap lock, then metadata lock).
 */
#ifndef HS_PAGE_HEAP_H
#define HS_PAGE_HEAP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/span.h"

/* Heap growth granularity: reservations are at least this big. */
#define HS_HEAP_CHUNK ((size_t)64 << 20)

/*
 * A span of npages heapscope pages whose start is a multiple of
 * align_pages pages (0 or 1 = no constraint).  The span is IN_USE with
 * size_class 0, every page mapped in the pagemap; span->zeroed tells
 * whether all its bytes are known to read as zero.  NULL when the OS
 * refuses memory or the request is impossibly large.  Thread-safe.
 */
hs_span_t *hs_page_heap_alloc(size_t npages, size_t align_pages);

/* Gives an IN_USE span back (coalesces with free neighbours; may return
 * memory to the OS under the release policy).  Thread-safe. */
void hs_page_heap_free(hs_span_t *s);

/* Grows IN_USE large span s in place to npages pages when the pages right
 * after it are free; true on success (pages mapped to s).  Thread-safe. */
bool hs_page_heap_try_grow(hs_span_t *s, size_t npages);

/* Returns up to `bytes` of free committed memory to the OS (SIZE_MAX =
 * all of it); result: bytes released.  Thread-safe. */
size_t hs_page_heap_release(size_t bytes);

/* Checker for tests: walks the free lists; 1 if consistent. */
int hs_page_heap_is_valid(void);

/* fork handlers */
void hs_page_heap_lock(void);
void hs_page_heap_unlock(void);
void hs_page_heap_reinit(void);

#endif /* HS_PAGE_HEAP_H */
