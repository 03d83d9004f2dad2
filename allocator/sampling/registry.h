/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/registry.h - the registry of live sampled allocations (layout
 * in include/heapscope/abi.h).  Private to the sampling side.
 *
 * Every writer holds the region lock (region/region.h), so writers
 * never race each other; the seqlock only protects readers (a collector
 * reading with process_vm_readv, tests reading in process).
 */
#ifndef HS_REGISTRY_H
#define HS_REGISTRY_H

#include <stdint.h>

#include "base/hs_common.h"
#include "heapscope/abi.h"

#define HS_REGISTRY_NO_SLOT UINT32_MAX

extern struct heapscope_registry heapscope_registry;

/* Reserve the record array (capacity slots, address space made writable
 * as slots are first used).  0 or -errno. */
int hs_registry_init(uint64_t capacity);

/* A free slot, or HS_REGISTRY_NO_SLOT when full or when the kernel
 * refuses the memory of new slots.  Lock held. */
uint32_t hs_registry_slot_alloc(void);

/* Give back a slot that was never published.  Lock held. */
void hs_registry_slot_free(uint32_t slot);

/* The record of a slot (no check). */
struct heapscope_record *hs_registry_record(uint32_t slot);

/* Next sequence number (atomic; starts at 1). */
uint64_t hs_registry_next_seq(void);

/* Publish a filled record (every field but seq) under seq; adds
 * span_bytes to sampled_bytes.  Lock held. */
void hs_registry_publish(uint32_t slot, uint64_t seq);

/* Clear a record (seq first) and return its slot.  Lock held. */
void hs_registry_release(uint32_t slot);

/* Mirror of the sampling period (atomic store). */
void hs_registry_set_period(int64_t period);

/* Gives back (MADV_DONTNEED) the 4 KiB pages of the record array below
 * high_water on which every record is free (seq 0); they read back as
 * zero, i.e. free records, and a later record written there faults a
 * fresh page.  Returns the bytes given back.  Caller holds the sampled
 * lock (the writers' lock). */
size_t hs_registry_trim(void);

/* The page walk behind hs_registry_trim, for any page-aligned array of n
 * elem_size-byte slots whose first field is a uint64_t seq (0 = free):
 * gives back the 4 KiB pages on which every slot is free.  Returns the
 * bytes given back.  Caller holds the lock of the slots' writers. */
size_t hs_trim_free_slots(void *base, size_t elem_size, uint64_t n);

/* The collector's control word: returns the requested period and clears
 * it, or 0 when there is no request.  Atomic. */
int64_t hs_registry_take_control(void);

#endif /* HS_REGISTRY_H */
