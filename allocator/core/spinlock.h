/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/spinlock.h - the short lock of the central free lists:
 * one word, taken with one atomic exchange when free, spun on (reads
 * only, with the CPU's pause hint) when held, and after a while of that
 * the waiter yields its CPU; it never sleeps in the kernel.
 *
 * Why not a pthread mutex: a central list is held for a pointer swap (a
 * transfer-cache batch) or one batch's span updates, well under a
 * microsecond, while a contended pthread mutex puts the waiter to sleep in
 * futex(2) and the holder's unlock pays a futex wake: a 2-thread program
 * freeing a quarter of its objects from the other thread spent its time
 * in mutex lock/unlock and futex sleeps (issue 19).  The yield keeps a
 * waiter from burning its time slice when the holder was preempted (two
 * cores shared with other programs).
 *
 * Thread-safety: that is the point.  Not recursive.  Acquire on lock,
 * release on unlock (what TSan checks, as for any atomic).
 */
#ifndef HS_SPINLOCK_H
#define HS_SPINLOCK_H

#include <stdint.h>

#include "base/hs_common.h"

typedef struct hs_spinlock {
	uint32_t held; /* 0 free, 1 held */
} hs_spinlock_t;

#define HS_SPINLOCK_INIT                                                       \
	{                                                                      \
		0                                                              \
	}

/* Out of line: spins with pause, then yields, until the lock is free and
 * taken (core/spinlock.c). */
void hs_spin_lock_slow(hs_spinlock_t *l);

static inline void hs_spin_lock(hs_spinlock_t *l)
{
	if (HS_LIKELY(!__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE)))
		return;
	hs_spin_lock_slow(l);
}

static inline void hs_spin_unlock(hs_spinlock_t *l)
{
	__atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

/* fork child: the lock is free whatever the parent's threads held */
static inline void hs_spin_init(hs_spinlock_t *l)
{
	__atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
}

#endif /* HS_SPINLOCK_H */
