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

/* Heap growth: standard chunks of this much address space, committed in
 * 2 MiB steps; a request above it gets a mapping of its own. */
#define HS_HEAP_CHUNK ((size_t)64 << 20)

/*
 * A large block: a span of npages heapscope pages whose start is a
 * multiple of align_pages pages (0 or 1 = no constraint).  The span is
 * IN_USE with size_class 0; its first and last pages map to it in the
 * pagemap, the others to NULL (so its size costs no metadata);
 * span->zeroed tells whether all its bytes are known to read as zero.
 * NULL when the kernel's overcommit policy refuses the memory (new
 * memory is mapped before any metadata is made) or the request is
 * beyond the address space the pagemap covers.  The span goes on the
 * heap map's list of in-use large spans (abi.h) until hs_page_heap_free
 * takes it back, under the same lock.  Thread-safe.
 */
hs_span_t *hs_page_heap_alloc(size_t npages, size_t align_pages);

/* A span for small objects: as hs_page_heap_alloc(npages, 1), and every
 * page maps to it (objects are looked up anywhere in it).  The caller
 * sets size_class.  Thread-safe. */
hs_span_t *hs_page_heap_alloc_small(size_t npages);

/* Up to n spans of npages each, as hs_page_heap_alloc_small, into out[],
 * under one acquisition of the page heap lock (a refill of a class whose
 * spans hold fewer objects than its batch needs several: rptestN's
 * classes of 4-16 KiB hold 1-7 objects per span for batches of 4-19).
 * Their pagemap entries carry class cls already (hs_pagemap_set_class's
 * pass, done in the same writes), and with it central-list shard `shard`
 * (< 16), also set as each span's shard.  Returns how many (fewer on
 * ENOMEM).  Thread-safe. */
size_t hs_page_heap_alloc_small_n(size_t npages, unsigned cls, unsigned shard,
				  hs_span_t **out, size_t n);

/* Gives an IN_USE span back (coalesces with free neighbours; may return
 * memory to the OS under the release policy).  _small: a span from
 * hs_page_heap_alloc_small, whose interior entries are cleared.
 * Thread-safe. */
void hs_page_heap_free(hs_span_t *s);
void hs_page_heap_free_small(hs_span_t *s);

/* Gives back every span of the list linked by ->next (each as
 * hs_page_heap_free_small) under one acquisition of the page heap lock,
 * then runs the release policy once.  Thread-safe. */
void hs_page_heap_free_small_list(hs_span_t *list);

/* Grows IN_USE large span s in place to npages pages when the pages right
 * after it are free; true on success (edges moved).  Thread-safe. */
bool hs_page_heap_try_grow(hs_span_t *s, size_t npages);

/* Returns up to `bytes` of free committed memory to the OS (SIZE_MAX =
 * all of it, and the span objects the page heap keeps go back to the
 * metadata arena, for hs_span_trim); result: bytes released.
 * Thread-safe. */
size_t hs_page_heap_release(size_t bytes);

/* Another pool (the region) is about to fault in `bytes` of fresh pages:
 * as much of the page heap's free committed memory goes back to the OS,
 * oldest first, the last span cut to size (page_release.c, swap on
 * fault-in).  Thread-safe. */
void hs_page_heap_release_on_fault(size_t bytes);

/* Checker for tests: walks the free lists; 1 if consistent. */
int hs_page_heap_is_valid(void);

/* fork handlers */
void hs_page_heap_lock(void);
void hs_page_heap_unlock(void);
void hs_page_heap_reinit(void);

#endif /* HS_PAGE_HEAP_H */
