/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/thread_cache.h - per-thread caches of free objects, one
 * singly linked list per size class, and the thread's initial-exec TLS.
 *
 * The TLS is kept small (56 bytes with hs_sampling_busy and the cached
 * tid) so the library can be dlopen'ed after other libraries took
 * glibc's static TLS surplus (~512 bytes guaranteed for all of them): it
 * holds the sampler, whose counter the malloc fast path tests, and a
 * pointer to the cache, which lives in the metadata arena.
 *
 * The pointer starts at hs_tc_empty, a read-only cache whose lists are
 * all empty with max_length 0, and the sampler at bytes_until_sample 0:
 * the first malloc and the first free of a thread reach the slow paths
 * without any "initialised?" test on the fast path, and the fast paths
 * never write to a cache before they know it has room (a write to the
 * shared empty cache would fault).  The slow path gives the thread a
 * cache of its own (hs_tc_activate); at thread exit the cache is emptied,
 * kept for the next thread, and the pointer moves to hs_tc_dead, as
 * empty but never activated again.
 */
#ifndef HS_THREAD_CACHE_H
#define HS_THREAD_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"
#include "core/size_class.h"
#include "sampling.h"

enum hs_tc_state {
	HS_TC_EMPTY = 0,  /* hs_tc_empty: the thread has no cache yet */
	HS_TC_ACTIVE = 1, /* registered for the thread-exit destructor */
	HS_TC_DEAD = 2,	  /* hs_tc_dead: thread exiting, no caching */
};

/* hs_tcache_t.refilled[cls] bits */
#define HS_TC_REFILLED 1      /* a refill since the last overflow */
#define HS_TC_EVER_REFILLED 2 /* the thread has refilled the class */
/* and above them, the thread's refills of the class the slow start cut
 * (thread_cache.c, FIRST_REFILL_BYTES) */
#define HS_TC_COUNT_SHIFT 2

typedef struct hs_tc_list {
	void *head;	     /* objects linked through their first word */
	uint32_t length;     /* objects on the list */
	uint32_t max_length; /* free flushes when length exceeds this */
} hs_tc_list_t;

/* Objects of one class the thread freed that belong to spans of other
 * shards (remote frees: core/free.h), on their way back to their spans'
 * shards a batch at a time; never handed out by this thread. */
typedef struct hs_tc_remote {
	void *head; /* linked through their first word */
	void *tail; /* the first one pushed */
	uint32_t n;
	uint32_t max;	/* the class's batch; 0 in the read-only caches */
	uint32_t shard; /* shard of the first, HS_TC_REMOTE_MIXED if not all */
} hs_tc_remote_t;

#define HS_TC_REMOTE_MIXED 0xffu

typedef struct hs_tcache {
	hs_tc_list_t lists[HS_NUM_CLASSES]; /* [0] stays empty */
	uint32_t state;			    /* enum hs_tc_state */
	/* central list shard (refills); every object on lists[] is of a
	 * span of this shard, frees of others go to remote[] (until another
	 * shard adopts the span, core/central_freelist.c: its objects still
	 * here are handed out, their frees go to its new shard) */
	uint32_t shard;
	struct hs_tcache *next_free; /* list of caches to reuse */
	/* bytes the lists may still grow beyond their classes' max_cached
	 * (hs_tc_overflow's growth; slow paths only) */
	uint64_t grow_left;
	uint8_t refilled[HS_NUM_CLASSES]; /* HS_TC_REFILLED | _EVER_ */
	hs_tc_remote_t remote[HS_NUM_CLASSES];
	struct hs_tcache *next_all; /* every cache ever made, for readers
				     * outside the process (base/stats.h);
				     * set once, kept across reuse */
} hs_tcache_t;

/* The calling thread's state in initial-exec TLS: one struct, so both
 * fast paths reach it through one TLS offset. */
typedef struct hs_thread {
	/* owned by the sampling side; in TLS, not in the cache, as its
	 * counter is on the fast path and its slow path runs (seeds it)
	 * before the thread has a cache */
	hs_sampler_t sampler;
	hs_tcache_t *tc; /* hs_tc_empty, the thread's own, or hs_tc_dead */
	/* tc->shard while tc is the thread's own, else 0, as a word: free's
	 * fast path xors it into the pagemap entry (core/free.h).  Here,
	 * not in the cache: the fast path then reads both through the TLS
	 * offset it has, and adds tc to the list offset in one instruction */
	uintptr_t shard_bits;
} hs_thread_t;

extern HS_TLS hs_thread_t hs_thread;
/* Read-only (a write faults): all lists empty, every max_length 0. */
extern const hs_tcache_t hs_tc_empty; /* state HS_TC_EMPTY */
extern const hs_tcache_t hs_tc_dead;  /* state HS_TC_DEAD */

/* Out-of-line: gives the calling thread a cache of its own when it has
 * none (hs_tc_empty): global init, a cache from the free list or the
 * metadata arena (never malloc), limits, exit destructor.  Returns false
 * while the allocator cannot be initialised or metadata cannot be
 * allocated (the thread stays on hs_tc_empty); true otherwise, also for
 * an exiting thread (hs_tc_dead, which serves without caching). */
bool hs_tc_activate(void);

/* Refill list cls from the central list and pop one object; NULL on
 * ENOMEM.  Called only when the list is empty.  Takes a batch; in an
 * allocation streak (no overflow since the previous refill of the class)
 * half the list's limit, in whole batches, up to 8 batches and 32 KiB.
 * A slow start caps the takes: the thread's first refill of the class at
 * 1 KiB of objects (at least one), each one cut doubling the cap.
 * A list below its class's max_cached gets it back; one at it or above,
 * that the thread had refilled before (it allocates the class in bursts
 * longer than its list), grows by what the refill takes (by a batch if
 * that does not fit), up to the class's list cap while the thread's
 * growth budget lasts (thread_cache.c). */
void *hs_tc_refill(hs_tcache_t *tc, unsigned cls);

/* Free of p (class cls) when list cls has no room (length >=
 * max_length): always so for hs_tc_empty and hs_tc_dead, whose objects go
 * straight to the central list (the empty one activates the thread's
 * cache for its next frees).  An active list takes p and gives a batch
 * back.  An overflow with no refill since the previous one (the thread
 * frees more of the class than it allocates: objects other threads
 * allocated, or the end of a burst) takes a batch off the list's limit,
 * down to one batch; if the transfer cache of p's shard is full it gives
 * the whole list to the spans instead, and the limit moves a batch
 * toward a streak's refill (8 batches, at most 32 KiB). */
void hs_tc_overflow(hs_tcache_t *tc, unsigned cls, void *p);

/* Out of line: the remote free of p (as hs_tc_remote_push) that fills
 * list cls of tc to a batch, which goes back to its spans' shards; or
 * one without an active cache (hs_tc_empty, hs_tc_dead, whose lists have
 * max 0): p goes to its span at once (the empty one activates the
 * thread's cache for its next frees). */
void hs_tc_remote_full(hs_tcache_t *tc, unsigned cls, unsigned shard, void *p);

/* Free of p (class cls, its span's shard `shard`), an object of a span
 * of another shard than the calling thread's cache tc's (a remote free:
 * core/free.h): onto the cache's remote list of the class, which goes
 * back to the spans' shards when it holds a batch (a batch of one shard
 * may be kept whole in that shard's transfer cache).  So a thread never
 * hands out an object of another shard's span: the cache lines of
 * objects freed by another thread go back to the threads that allocate
 * from their spans (rptestN: docs/allocator.md, "Remote frees go back to
 * their shard").  Tests for room before writing, as hs_tc_try_push. */
/* Links p (of a span of shard `shard`) onto remote list r. */
static inline void hs_tc_remote_link(hs_tc_remote_t *r, unsigned shard, void *p)
{
	uint32_t n = r->n;
	*(void **)p = r->head;
	r->head = p;
	r->n = n + 1;
	if (!n) {
		r->tail = p;
		r->shard = shard;
	} else if (r->shard != shard) {
		r->shard = HS_TC_REMOTE_MIXED;
	}
}

static inline void hs_tc_remote_push(hs_tcache_t *tc, unsigned cls,
				     unsigned shard, void *p)
{
	hs_tc_remote_t *r = &tc->remote[cls];
	if (HS_UNLIKELY(r->n + 1 >= r->max)) {
		hs_tc_remote_full(tc, cls, shard, p);
		return;
	}
	hs_tc_remote_link(r, shard, p);
}

/* The list of class cls is at byte offset cls << HS_CLASS_TABLE_SHIFT of
 * the cache: the offset the size -> class table (size_class.h) and the
 * pagemap's entries (pagemap.h) carry, so the fast paths add it to the
 * cache's address with no multiply. */
_Static_assert(sizeof(hs_tc_list_t) == 1u << HS_CLASS_TABLE_SHIFT &&
		       offsetof(hs_tcache_t, lists) == 0,
	       "hs_tcache_t.lists[cls] is not at cls << HS_CLASS_TABLE_SHIFT");

/* List at byte offset off (a class << HS_CLASS_TABLE_SHIFT) of cache tc. */
static inline hs_tc_list_t *hs_tc_list_at(const hs_tcache_t *tc, size_t off)
{
	return (hs_tc_list_t *)((char *)tc + off);
}

/* Free fast path: pushes p onto list l of the calling thread's cache when
 * it has room; false, nothing written, when it has none (the caller
 * hands p to hs_tc_overflow).  Tests for room before writing, so the
 * shared read-only caches are never written. */
static inline bool hs_tc_try_push(hs_tc_list_t *l, void *p)
{
	uint32_t len = l->length;
	if (HS_UNLIKELY(len >= l->max_length))
		return false;
	*(void **)p = l->head;
	l->head = p;
	l->length = len + 1;
	return true;
}

/* Gives every cached object of the calling thread back, and every batch
 * in the central transfer caches to its spans (malloc_trim). */
void hs_tc_flush_current(void);

/* The thread-exit destructor (a pthread key's, registered by
 * hs_tc_register_exit in init.c): the calling thread moves to hs_tc_dead,
 * its cache's objects go back and the cache is kept for the next
 * thread. */
void hs_tc_thread_exit(void *tc);

#endif /* HS_THREAD_CACHE_H */
