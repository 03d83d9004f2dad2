/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/hs_unwind.h - call stacks of sampled allocations and frees, and
 * the sampling side's per-thread re-entrancy guard.
 */
#ifndef HS_UNWIND_STACK_H
#define HS_UNWIND_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/hs_common.h"

/*
 * Per-thread re-entrancy guard of the sampling side: set while a thread
 * unwinds, logs or holds sampled-path state.  Any allocation made meanwhile
 * (by libgcc, the dynamic loader, ...) is served unsampled.
 */
extern HS_TLS int hs_sampling_busy;

static inline bool hs_guard_enter(void)
{
	if (hs_sampling_busy)
		return false;
	hs_sampling_busy = 1;
	return true;
}

static inline void hs_guard_leave(void)
{
	hs_sampling_busy = 0;
}

/*
 * Capture up to max return addresses of the calling thread into out[],
 * innermost first, from the DWARF CFI (right for code built without frame
 * pointers): a cached unwind step per return address (unwind.c), with
 * libgcc's _Unwind_Backtrace for stacks through frames outside the simple
 * CFA = RSP/RBP + k subset; both give the same addresses.  The allocator's
 * own frames are skipped, so out[0] is the caller of malloc / operator
 * new.  Returns the number of frames stored.  Call with the guard held.
 * Lock-free and allocation-free on the cached path.
 */
uint32_t hs_unwind_capture(uint64_t *out, uint32_t max);

/* Gives the pages of the unwind-rule cache (128 KiB) back to the OS
 * (malloc_trim): it starts again empty.  Safe while other threads
 * unwind: an entry zeroed under a reader fails its sequence check, one
 * zeroed under a writer loses its ip and never matches.  Returns the
 * bytes given back. */
size_t hs_unwind_trim(void);

/* Bytes of the unwinder's static rule cache that it hashes over now: 4 KiB
 * to start with, doubled as it fills, up to 128 KiB (for the statistics
 * block, which unwind_cache.c updates as it grows).  Thread-safe. */
size_t hs_unwind_cache_bytes(void);

#endif /* HS_UNWIND_STACK_H */
