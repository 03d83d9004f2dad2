/* SPDX-License-Identifier: MIT */
/*
 * allocator/region/lock.h - the lock behind hs_region_lock (region.h):
 * one word, taken with one compare-and-swap when free; a waiter spins on
 * reads with the CPU's pause hint, yields its CPU a few times, and only
 * then sleeps in futex(2) (region/lock.c).  The unlock is one exchange,
 * plus a futex wake only when someone sleeps.
 *
 * Why not the adaptive pthread mutex of base/mutex.h it replaces: a
 * sampled malloc and its free each hold the region lock for well under
 * a microsecond, yet larsonN-sized (2 threads, ~8k samples a second) made
 * 60-110 futex calls a run from take_sample and hs_sampled_free where
 * sampling off made 9: the adaptive mutex sleeps as soon as its short
 * spin fails, which on two cores shared with other programs is whenever
 * the holder was preempted, and every such sleep costs the holder's
 * unlock a futex wake.  Yielding first gives a preempted holder the CPU
 * back; the futex sleep stays for the holders that take long (a trim's
 * madvise calls, a profile snapshot walking the registry), so a waiter
 * never spins through those.  The uncontended lock and unlock are also
 * ~10 instructions against glibc's ~65.
 *
 * Thread-safety: that is the point.  Not recursive.  Acquire on lock,
 * release on unlock.
 */
#ifndef HS_REGION_LOCK_H
#define HS_REGION_LOCK_H

#include <stdint.h>

#include "base/hs_common.h"

typedef struct hs_word_lock {
	uint32_t state; /* 0 free, 1 held, 2 held and someone may sleep */
} hs_word_lock_t;

#define HS_WORD_LOCK_INIT                                                      \
	{                                                                      \
		0                                                              \
	}

/* Out of line, region/lock.c: spin, yield, then sleep until taken. */
void hs_word_lock_slow(hs_word_lock_t *l);
/* Out of line, region/lock.c: wake one sleeper. */
void hs_word_lock_wake(hs_word_lock_t *l);

static inline void hs_word_lock(hs_word_lock_t *l)
{
	uint32_t free = 0;

	if (HS_LIKELY(__atomic_compare_exchange_n(&l->state, &free, 1, 0,
						  __ATOMIC_ACQUIRE,
						  __ATOMIC_RELAXED)))
		return;
	hs_word_lock_slow(l);
}

static inline void hs_word_unlock(hs_word_lock_t *l)
{
	if (HS_UNLIKELY(__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) ==
			2))
		hs_word_lock_wake(l);
}

/* fork child: free, whatever the parent's other threads did with it */
static inline void hs_word_lock_init(hs_word_lock_t *l)
{
	__atomic_store_n(&l->state, 0, __ATOMIC_RELAXED);
}

#endif /* HS_REGION_LOCK_H */
