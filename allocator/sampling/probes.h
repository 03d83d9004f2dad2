/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/probes.h - the USDT probes of provider "heapscope" (the ABI is
 * documented in include/heapscope/abi.h).  Each probe has a semaphore in
 * section .probes, exported so that tools (libbpf, bpftrace, systemtap)
 * can find it; the kernel increments it while a uprobe is attached.  The
 * probe sites test the semaphore first, so arguments (and the free-side
 * stack unwind) cost nothing while no collector is attached.
 *
 * probes.c defines every semaphore and fires the compatible probes
 * (below); the heapscope probes fire inline where samples are taken and
 * retired.
 */
#ifndef HS_PROBES_H
#define HS_PROBES_H

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdint.h>

/* Every probe site is sdt.h's 1-byte nop, on purpose.  Linux 6.17+ turns a
 * uprobe on a 5-byte nop into a call to a "[uprobes-trampoline]" page
 * after the first hit (arch_uprobe_optimize), but that page is not
 * copied on fork while the patched text page is: a child forked after a
 * sampled event, while a collector is attached, dies with SIGSEGV at its
 * first sampled event (Linux 6.18.44 here: a tracefs uprobe on a bare
 * `.nops 5` in a ten-line program reproduces it without heapscope or
 * BPF; with a 1-byte nop the child runs).  A fleet host with the daemon
 * running would lose the children of every forking program, so the probe
 * takes the int3 trap and single-step (about 5 instead of 1.7 us per hit
 * here, once per sampled event), which fork handles: the child gets its
 * own XOL page on its first hit.  rel_fork_under_daemon checks it. */

#include "base/hs_common.h"

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
 * written for them can read heapscope (issue 5, item 7): otel_memory and
 * ddheap, alloc(ptr, size, weight) and free(ptr), defined in
 * include/heapscope/abi.h ("Compatible probes") and fired by
 * probes.c.  Called at the same points as sample_alloc /
 * sample_free: allocations outside the sampled lock, frees before the
 * pages can be reused.  Each costs one test of two semaphores while no
 * tool is attached.
 * ptr: the sampled pointer; req/alloc: requested and allocated bytes;
 * weight: the sample's weight W (bytes in units of req + 1).
 * The compatible probes carry size = req and weight = round(req*W/(req+1)),
 * the estimated requested bytes this sample stands for.
 */
extern volatile unsigned short otel_memory_alloc_semaphore;
extern volatile unsigned short otel_memory_free_semaphore;
extern volatile unsigned short ddheap_alloc_semaphore;
extern volatile unsigned short ddheap_free_semaphore;

/* Fire otel_memory:alloc and ddheap:alloc (each only while its semaphore
 * is set) with ptr, size (bytes), weight (estimated bytes).  Thread-safe. */
void hs_probe_compat_alloc(uint64_t ptr, uint64_t size, uint64_t weight);
/* Fire otel_memory:free and ddheap:free likewise.  Thread-safe. */
void hs_probe_compat_free(uint64_t ptr);

/* round(req * w / (req + 1)) without overflow: the estimated requested
 * bytes of a sample of weight w (W in units of req + 1). */
static inline uint64_t hs_compat_weight(uint64_t req, uint64_t w)
{
	unsigned __int128 d = (unsigned __int128)req + 1;

	return (uint64_t)(((unsigned __int128)req * w + d / 2) / d);
}

#define HS_PROBE_COMPAT_ALLOC(ptr, req, alloc, weight)                        \
	do {                                                                  \
		(void)(alloc);                                                \
		if (HS_UNLIKELY((otel_memory_alloc_semaphore |                \
				 ddheap_alloc_semaphore) != 0))               \
			hs_probe_compat_alloc(                                \
				(uint64_t)(uintptr_t)(ptr), (uint64_t)(req),  \
				hs_compat_weight((uint64_t)(req),             \
						 (uint64_t)(weight)));        \
	} while (0)
#define HS_PROBE_COMPAT_FREE(ptr, req, alloc)                                 \
	do {                                                                  \
		(void)(req);                                                  \
		(void)(alloc);                                                \
		if (HS_UNLIKELY((otel_memory_free_semaphore |                 \
				 ddheap_free_semaphore) != 0))                \
			hs_probe_compat_free((uint64_t)(uintptr_t)(ptr));     \
	} while (0)

#endif /* HS_PROBES_H */
