/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/fragmentation.h - the fragmentation records: the
 * span occupancy behind small samples' proxies (fragmentation.c,
 * include/heapscope/abi.h struct heapscope_record_ext).  Private to the
 * sampling side.
 */
#ifndef HS_FRAGMENTATION_H
#define HS_FRAGMENTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_span_occupancy; /* core/core.h */

#include "heapscope/abi.h"

/* Reserve the extension array (0 or -ENOMEM); the others with the region
 * lock held: set one slot's extension, clear a slot being
 * released, refresh a few slots round robin (every live slot about every
 * 100 ms, at most 16 per call).  now: the caller's CLOCK_MONOTONIC time
 * in ns (read once per event), stored as the slots' updated_ns. */
int hs_frag_init(uint64_t capacity);
/* Make the extensions of slots [0, slots) writable (they are address
 * space until then, like the records).  0, or -ENOMEM when the kernel
 * refuses; 0 when there is no extension array.  Region lock held. */
int hs_frag_commit(uint64_t slots);
/* No lock: the occupancy of the span of a sample's proxy (a snapshot,
 * read before the region lock is taken); false when there is no
 * extension array or proxy is in no small span. */
bool hs_frag_occupancy(const void *proxy, struct hs_span_occupancy *o);
/* Lock held: slot's extension gets o (NULL: none, the slot is left out)
 * for the record published under seq (0: none), stamped now. */
void hs_frag_set(uint32_t slot, uint64_t seq,
		 const struct hs_span_occupancy *o, uint64_t now);
void hs_frag_clear(uint32_t slot);
void hs_frag_refresh_some(uint64_t now);
/* malloc_trim, region lock held: gives back the extension pages on which
 * every slot is unused (seq 0); returns the bytes given back. */
size_t hs_frag_trim(void);

/* The extension array (parallel to the registry's records), or NULL
 * when it could not be reserved.  Lock held to read a slot. */
const struct heapscope_record_ext *hs_frag_records(void);
/* Lock held: refresh every slot below the registry's high water. */
void hs_frag_refresh_all(uint64_t now);

#endif /* HS_FRAGMENTATION_H */
