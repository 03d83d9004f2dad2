/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/core.h - what the core offers the sampling side: the
 * normal heap without the sampler (proxies, re-entrant calls), and the
 * sizes it would give.  The sampling side includes this header and
 * allocator/sampling.h from the core, nothing else; the core reaches the
 * sampling side only through allocator/sampling.h.
 */
#ifndef HS_CORE_H
#define HS_CORE_H

#include <stddef.h>

/* ---- alloc.c ---- */

/* Allocate from the normal heap, never sampled.  align 0 = default (16),
 * else a power of two.  Returns NULL on ENOMEM (errno not touched). */
void *hs_alloc_unsampled(size_t size, size_t align);
/* Bytes a normal-heap allocation of (size, align) would really reserve:
 * the size-class size for small requests, page-rounded for large ones. */
size_t hs_alloc_size_for(size_t size, size_t align);

/* ---- free.c ---- */

/* Free a pointer from hs_alloc_unsampled or any non-sampled block. */
void hs_free_unsampled(void *p);

#endif /* HS_CORE_H */
