/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/central_freelist.h - central free lists: per size class and
 * per shard, the spans of that class and shard that still have free
 * objects, behind one short spinlock each (core/spinlock.h; the page heap
 * is never called with it held).  Thread caches move objects in and out
 * in batches.
 *
 * Shards keep threads that run at the same time off each other's spans:
 * a thread refills only from its own shard (assigned when its cache is
 * activated: the shard with the fewest live threads), and an object always
 * goes back to the shard of its span.  A shard out of partial spans of a
 * class adopts those of shards idle for 10 ms (hs_central_shards_idle;
 * central_freelist.c adopt) before it takes new spans.  With one shared
 * list per class the spans' free lists interleaved the objects of every
 * thread, so two threads' live objects shared cache lines (small_churn at
 * 2 threads: 18 % of a thread's live lines also held the other thread's
 * objects, written by both cores; 0 % with mimalloc, jemalloc and glibc).
 */
#ifndef HS_CENTRAL_FREELIST_H
#define HS_CENTRAL_FREELIST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/size_class.h"

#define HS_CENTRAL_MAX_SHARDS 16

/* A shard for a thread whose cache is being activated (fewest live
 * threads, lowest index on ties); hs_central_shard_put when it exits,
 * true when that left the shard with no live thread. */
unsigned hs_central_shard_get(void);
bool hs_central_shard_put(unsigned shard);
/* Shards in use (fixed once first computed; core/central_shard.c). */
unsigned hs_central_nshards(void);
/* A refill of shard `shard` (hs_central_remove_range): marks it active.
 * Thread-safe, lock-free; counts may be lost, never stand still. */
void hs_central_shard_refilled(unsigned shard);
/* Shards a thread that found no span with free objects in its own may
 * take partial spans from (hs_central_remove_range): the set (bit sh)
 * of shards ever refilled whose refill count the calls (by any thread)
 * have seen unchanged for 10 ms or more (a coarse clock: 6-14 ms),
 * whether or not they have live threads.  Racy by design: a shard taken
 * for idle that is not costs its threads a refill from elsewhere, never
 * correctness.  Thread-safe, lock-free. */
uint32_t hs_central_shards_idle(void);
/* fork child: every shard's thread count back to 0. */
void hs_central_shard_reinit(void);

/*
 * Takes up to n objects of class cls from shard `shard`; they come back
 * as a chain from *head to *tail linked through their first word
 * (*(void **)obj), the tail's link unspecified.  Returns how many (0 only
 * on ENOMEM).  When the shard's transfer cache holds batches they come
 * from there only, whole: as many as fit in n (fewer objects than n when
 * n is not a multiple of the batch), one link write each; one batch
 * (more than n) when n is under a batch and the shard has no span with
 * free objects.  Objects of a fresh span come in address order.
 * Thread-safe (class lock; a new span is taken from the page heap with
 * the class lock released).
 */
int hs_central_remove_range(unsigned cls, unsigned shard, void **head,
			    void **tail, int n);

/* Gives back a chain of n objects of class cls (linked as above, tail =
 * the n-th), each to the shard of its span (a full batch may be kept
 * whole in that shard's transfer cache).  Spans whose objects are all
 * back return to the page heap, after the class lock is released.
 * Thread-safe. */
void hs_central_insert_range(unsigned cls, void *head, void *tail, int n);

/* Gives back a chain of n objects of class cls (linked as above, the
 * n-th's link unspecified) straight to their spans, past the transfer
 * cache: for a chain that is not a batch, or when hs_central_tc_full.
 * Thread-safe. */
void hs_central_insert_chain(unsigned cls, void *head, int n);

/* Whether the transfer cache of class cls in the shard of obj's span
 * has no room for a batch (or the class has none).  A racy read, a hint
 * for the thread cache: a batch it gives back would go to the spans
 * anyway.  Thread-safe. */
bool hs_central_tc_full(unsigned cls, const void *obj);

/* Gives every batch held in transfer caches back to its spans
 * (malloc_trim).  Thread-safe. */
void hs_central_drain(void);
/* Shard sh has no live thread (its last one exited, its cache flushed):
 * its transfer-cache batches go back to their spans and its kept empty
 * spans (KEEP_EMPTY) to the page heap, where any shard and class can
 * take them; no thread of sh would carve them soon.  Thread-safe (a
 * thread may take sh meanwhile: it only refills from the page heap). */
void hs_central_shard_vacated(unsigned sh);

/* Checker for tests: every listed span belongs to its class, is in use,
 * maps to itself and has a free or uncarved object.  1 if consistent. */
int hs_central_is_valid(void);

/* For tests: the transfer-cache slot array of (shard, class) and its
 * bytes (NULL and 0 when it has none); the static memory of shard sh's
 * lists. */
void *hs_central_tc_slots(unsigned shard, unsigned cls, size_t *bytes);
const void *hs_central_shard_mem(unsigned shard, size_t *bytes);

/* fork handlers: every class lock (each class's shards in turn),
 * ascending. */
void hs_central_lock_all(void);
void hs_central_unlock_all(void);
void hs_central_reinit(void);

#endif /* HS_CENTRAL_FREELIST_H */
