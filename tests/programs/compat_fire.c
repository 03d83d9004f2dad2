// SPDX-License-Identifier: MIT
/*
 * compat_fire.c - libcompat_fire.so: the probe side of an "other
 * allocator" as a shared library, for the daemon's compatible-probe test
 * (tests/test_daemon_compat.sh).  It fires otel_memory:alloc(ptr, size,
 * weight) and otel_memory:free(ptr) (<sys/sdt.h>, each behind its own
 * semaphore), so `heapscope daemon --lib libcompat_fire.so` attaches them
 * by object path for every process, as it does libheapscope's own.  Built
 * with frame pointers: the BPF stack walk starts in these functions.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <stdint.h>

#include "compat_fire.h"

/* Hidden: the notes carry the addresses; nothing else must bind to them
 * (a copy relocation in the program would never see the kernel's
 * increments). */
#define SEMAPHORE                                                              \
	__attribute__((section(".probes"), visibility("hidden"), used))
volatile unsigned short otel_memory_alloc_semaphore SEMAPHORE;
volatile unsigned short otel_memory_free_semaphore SEMAPHORE;

__attribute__((noinline)) void compat_fire_alloc(void *p, uint64_t size,
						 uint64_t weight)
{
	if (otel_memory_alloc_semaphore)
		STAP_PROBE3(otel_memory, alloc, p, size, weight);
}

__attribute__((noinline)) void compat_fire_free(void *p)
{
	if (otel_memory_free_semaphore)
		STAP_PROBE1(otel_memory, free, p);
}

int compat_fire_armed(void)
{
	return otel_memory_alloc_semaphore && otel_memory_free_semaphore;
}
