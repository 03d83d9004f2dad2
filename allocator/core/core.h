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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- central_freelist.c ---- */

/* The span a small object lies in, as the fragmentation records see it:
 * its address and bytes, objects out of it and objects it holds. */
struct hs_span_occupancy {
	uint64_t start, bytes;
	uint32_t live, objects;
};

/* Fill *o for the span of small object obj (one the caller keeps
 * allocated, so its span stays in use).  False when obj is not in a
 * small-object span.  live is read without the class lock: a snapshot.
 * Thread-safe. */
bool hs_central_occupancy(const void *obj, struct hs_span_occupancy *o);

#endif /* HS_CORE_H */
