// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/probes.c - the USDT semaphores of every probe
 * (exported, section .probes: tools find them by name), and the
 * allocation probes of other providers that libheapscope also fires, so
 * that collectors written for them read heapscope's samples too (issue 5, item 7; definition and sources in
 * include/heapscope/abi.h, "Compatible probes"):
 *
 *   otel_memory:alloc(ptr, size, weight)   otel_memory:free(ptr)
 *   ddheap:alloc(ptr, size, weight)        ddheap:free(ptr)
 *
 * Each probe has its own USDT semaphore; the callers in probes.h test them
 * before calling here, so nothing is computed while no tool is attached.
 * The heapscope:* probes themselves fire inline (probes.h) where samples
 * are taken and retired (sample.c, sampled_free.c, sampling.c).
 *
 * Argument locations: the OpenTelemetry eBPF profiler's first memory
 * profiling version reads the three arguments from the registers of the
 * SysV / AAPCS64 calling convention (rdi, rsi, rdx / x0, x1, x2) instead
 * of decoding the note's argument descriptors.  The probes therefore sit
 * in out-of-line functions whose arguments are pinned to exactly those
 * registers at the probe site (register variables used as "r" operands,
 * the use GCC guarantees), and the notes say so ("8@%rdi 8@%rsi 8@%rdx"),
 * so readers of either kind get the same values.
 */

/* Before any include of <sys/sdt.h>: semaphores, register operands only. */
#define _SDT_HAS_SEMAPHORES 1
#if defined(__x86_64__) || defined(__aarch64__)
#define STAP_SDT_ARG_CONSTRAINT r
#endif
#include <sys/sdt.h>

#include <stdint.h>

#include "sampling/probes.h"

HS_EXPORT volatile unsigned short heapscope_sample_alloc_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short heapscope_sample_free_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short heapscope_rate_change_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short heapscope_mismatched_free_semaphore
	__attribute__((section(".probes")));

HS_EXPORT volatile unsigned short otel_memory_alloc_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short otel_memory_free_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short ddheap_alloc_semaphore
	__attribute__((section(".probes")));
HS_EXPORT volatile unsigned short ddheap_free_semaphore
	__attribute__((section(".probes")));

#if defined(__x86_64__)
#define HS_ARG_REG0 "rdi"
#define HS_ARG_REG1 "rsi"
#define HS_ARG_REG2 "rdx"
#elif defined(__aarch64__)
#define HS_ARG_REG0 "x0"
#define HS_ARG_REG1 "x1"
#define HS_ARG_REG2 "x2"
#endif

HS_NOINLINE void hs_probe_compat_alloc(uint64_t ptr, uint64_t size,
				       uint64_t weight)
{
#ifdef HS_ARG_REG0
	register uint64_t a0 __asm__(HS_ARG_REG0) = ptr;
	register uint64_t a1 __asm__(HS_ARG_REG1) = size;
	register uint64_t a2 __asm__(HS_ARG_REG2) = weight;
#else
	uint64_t a0 = ptr, a1 = size, a2 = weight;
#endif

	if (otel_memory_alloc_semaphore)
		STAP_PROBE3(otel_memory, alloc, a0, a1, a2);
	if (ddheap_alloc_semaphore)
		STAP_PROBE3(ddheap, alloc, a0, a1, a2);
}

HS_NOINLINE void hs_probe_compat_free(uint64_t ptr)
{
#ifdef HS_ARG_REG0
	register uint64_t a0 __asm__(HS_ARG_REG0) = ptr;
#else
	uint64_t a0 = ptr;
#endif

	if (otel_memory_free_semaphore)
		STAP_PROBE1(otel_memory, free, a0);
	if (ddheap_free_semaphore)
		STAP_PROBE1(ddheap, free, a0);
}
