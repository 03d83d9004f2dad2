/* SPDX-License-Identifier: MIT */
/*
 * allocator/probes.h - the USDT probes of provider "heapscope" (the ABI is
 * documented in include/heapscope/abi.h).  Each probe has a semaphore in
 * section .probes, exported so that tools (libbpf, bpftrace, systemtap)
 * can find it; the kernel increments it while a uprobe is attached.  The
 * probe sites test the semaphore first, so arguments (and the free-side
 * stack unwind) cost nothing while no collector is attached.
 *
 * Only sampled.c fires probes; the semaphores are defined there.
 */
#ifndef HS_PROBES_H
#define HS_PROBES_H

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "hs_common.h"

extern volatile unsigned short heapscope_sample_alloc_semaphore;
extern volatile unsigned short heapscope_sample_free_semaphore;
extern volatile unsigned short heapscope_rate_change_semaphore;
extern volatile unsigned short heapscope_mismatched_free_semaphore;

/* True while some tool has attached to probe `name`. */
#define HS_PROBE_ENABLED(name) HS_UNLIKELY(heapscope_##name##_semaphore != 0)

#define HS_PROBE_SAMPLE_ALLOC(ptr, req, alloc, align, weight, stack, depth, seq) \
	STAP_PROBE8(heapscope, sample_alloc, (uint64_t)(uintptr_t)(ptr),       \
		    (uint64_t)(req), (uint64_t)(alloc), (uint64_t)(align),      \
		    (uint64_t)(weight), (uint64_t)(uintptr_t)(stack),           \
		    (uint32_t)(depth), (uint64_t)(seq))

#define HS_PROBE_SAMPLE_FREE(ptr, req, alloc, alloc_seq, stack, depth, seq)   \
	STAP_PROBE7(heapscope, sample_free, (uint64_t)(uintptr_t)(ptr),        \
		    (uint64_t)(req), (uint64_t)(alloc), (uint64_t)(alloc_seq),  \
		    (uint64_t)(uintptr_t)(stack), (uint32_t)(depth),            \
		    (uint64_t)(seq))

#define HS_PROBE_RATE_CHANGE(new_period, old_period)                          \
	STAP_PROBE2(heapscope, rate_change, (int64_t)(new_period),             \
		    (int64_t)(old_period))

#define HS_PROBE_MISMATCHED_FREE(ptr, given, req, alloc, alloc_seq)          \
	STAP_PROBE5(heapscope, mismatched_free, (uint64_t)(uintptr_t)(ptr),    \
		    (uint64_t)(given), (uint64_t)(req), (uint64_t)(alloc),      \
		    (uint64_t)(alloc_seq))

/*
 * Probes of other providers that heapscope also fires, so collectors
 * written for them can read heapscope (issue 5, item 7).  Called at the
 * same points as sample_alloc / sample_free, outside the sampled lock for
 * allocations and before the pages can be reused for frees.
 * ptr: the sampled pointer; req/alloc: requested and allocated bytes;
 * weight: the sample's weight W in bytes.  Placeholders until filled in.
 */
#define HS_PROBE_COMPAT_ALLOC(ptr, req, alloc, weight) \
	do {                                           \
		(void)(ptr);                           \
		(void)(req);                           \
		(void)(alloc);                         \
		(void)(weight);                        \
	} while (0)
#define HS_PROBE_COMPAT_FREE(ptr, req, alloc) \
	do {                                  \
		(void)(ptr);                  \
		(void)(req);                  \
		(void)(alloc);                \
	} while (0)

#endif /* HS_PROBES_H */
