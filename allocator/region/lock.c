// SPDX-License-Identifier: MIT
/*
 * allocator/region/lock.c - the contended half of region/lock.h: the
 * three-state futex lock (0 free, 1 held, 2 held with possible sleepers)
 * of U. Drepper's "Futexes Are Tricky" (mutex 2), with a spin and yield
 * phase before the first sleep.
 *
 * SPINS pause hints per round (~8k cycles, several times the region
 * lock's usual hold), YIELDS rounds separated by sched_yield (a holder
 * preempted on this CPU runs again), then sleep: state 2 says someone
 * may sleep, so the unlock that sees it wakes one waiter, which takes the
 * lock as 2 again (it cannot know whether others still sleep).
 */
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "region/lock.h"

#define SPINS 128
#define YIELDS 4

static int try_take(hs_word_lock_t *l)
{
	uint32_t free = 0;

	return __atomic_load_n(&l->state, __ATOMIC_RELAXED) == 0 &&
	       __atomic_compare_exchange_n(&l->state, &free, 1, 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

HS_NOINLINE void hs_word_lock_slow(hs_word_lock_t *l)
{
	for (int round = 0; round < YIELDS; round++) {
		for (int i = 0; i < SPINS; i++) {
			if (try_take(l))
				return;
			hs_cpu_relax();
		}
		sched_yield();
	}
	/* sleep while it stays held (EAGAIN: it changed, look again) */
	while (__atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE) != 0)
		syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL,
			0);
}

HS_NOINLINE void hs_word_lock_wake(hs_word_lock_t *l)
{
	syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
