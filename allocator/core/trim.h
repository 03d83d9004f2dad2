/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/trim.h - giving memory back to the OS on request
 * (malloc_trim; trim.c).
 */
#ifndef HS_TRIM_H
#define HS_TRIM_H

#include <stddef.h>

/*
 * Give back everything the heap can: the calling thread's cache and the
 * transfer caches to their spans, every free committed page-heap span,
 * the sampling side's cached pages and unused records, then the metadata
 * (pagemap leaves first: they read span objects; then span objects no
 * span uses).  Returns the bytes given back; 0 before the allocator is
 * initialised.  Thread-safe.
 */
size_t hs_trim(void);

#endif /* HS_TRIM_H */
