/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/mutex.h - the allocator's sleeping locks (the page
 * heap; the sampled region had one until region/lock.h replaced it):
 * glibc's adaptive mutexes, which try the lock a few
 * dozen times (with pause hints) before they sleep in futex.
 *
 * Their critical sections are a few hundred instructions; with threads
 * on every core a waiter that slept paid a futex wait and a wake-up
 * (tens of microseconds on a VM) for a lock free again after one:
 * rptestN (random sizes to 16 KiB: a span per refill and per overflow,
 * each under the page heap lock) and larsonN-sized (a sample every few
 * thousand allocations, each under the region lock) slept in futex ~100
 * times a run where mimalloc sleeps once (strace -f -c).  An adaptive
 * mutex still sleeps when the holder is preempted or is in a system call
 * (mmap, madvise) that outlasts the spin.
 *
 * HS_MUTEX_INIT initialises one statically; hs_mutex_reinit gives one
 * back its initial state (fork child: the thread that held it is gone
 * or is this one).  Thread-safety as pthread_mutex_t's.
 */
#ifndef HS_MUTEX_H
#define HS_MUTEX_H

#include <pthread.h>

#define HS_MUTEX_INIT PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP

/* *m back to HS_MUTEX_INIT's state, whatever it was. */
static inline void hs_mutex_reinit(pthread_mutex_t *m)
{
	static const pthread_mutex_t init = HS_MUTEX_INIT;

	*m = init;
}

#endif /* HS_MUTEX_H */
