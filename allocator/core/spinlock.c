/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/spinlock.c - the contended half of core/spinlock.h.
 *
 * Spins on plain loads (the line stays shared in every waiter's cache
 * until the holder's release store), SPINS pause hints per round, then
 * yields the CPU: on a machine with more runnable threads than cores the
 * holder may be waiting for this very CPU.
 */
#include <sched.h>

#include "core/spinlock.h"

#define SPINS 128

HS_NOINLINE void hs_spin_lock_slow(hs_spinlock_t *l)
{
	for (;;) {
		for (int i = 0; i < SPINS; i++) {
			if (!__atomic_load_n(&l->held, __ATOMIC_RELAXED) &&
			    !__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE))
				return;
			hs_cpu_relax();
		}
		sched_yield();
	}
}
