/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/large.h - large blocks (over HS_MAX_SMALL_SIZE, or
 * aligned beyond what a size class gives): which pool serves them and
 * their accounting (large.c).
 */
#ifndef HS_LARGE_H
#define HS_LARGE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/span.h"

/* Largest request the heap accepts (64 TiB: beyond any address space). */
#define HS_LARGE_MAX ((size_t)1 << 46)

/* Publish the span layout of the heap map's large-span list (abi.h);
 * once, at global init. */
void hs_large_init(void);

/* A whole span of ceil(n / 8 KiB) pages of the page heap, aligned to
 * align bytes when align > one heapscope page.  NULL on ENOMEM (errno not
 * touched).  Thread-safe. */
void *hs_large_alloc_span(size_t n, size_t align);

/* A large block with at most page alignment from the pool that serves
 * it: the sampled region's pages up to HEAPSCOPE_REGION_BLOCK_MAX (one
 * pool with the sampled large blocks, region/blocks.c), else (region not
 * set up, full, or the block larger) a page-heap span.  NULL on ENOMEM.
 * Thread-safe. */
void *hs_large_alloc(size_t n);

/* hs_region_alloc_growable and hs_region_grow (sampling.h), for realloc.
 * Like hs_large_alloc, the fresh pages a block of the region takes send
 * as much of the page heap's free committed memory back (swap on
 * fault-in across the two pools: the page heap's own rule,
 * core/page_release.c, sees only its own growth).  NULL / false as the
 * region's calls.  Thread-safe. */
void *hs_large_alloc_growable(size_t n);
bool hs_large_region_grow(void *p, size_t n);

/* Grow the page-heap block of span s in place to hold n bytes; false
 * when the pages after it are not free.  Thread-safe. */
bool hs_large_grow(hs_span_t *s, size_t n);

/* Give the page-heap block of span s (IN_USE, class 0) back. */
void hs_large_free(hs_span_t *s);

#endif /* HS_LARGE_H */
