/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/thread_cache.h - per-thread caches of free objects, one
 * singly linked list per size class, in initial-exec TLS.
 *
 * The static initial value is all zero ("empty"): every list is empty and
 * every max_length is 0, and the embedded sampler has bytes_until_sample
 * 0, so the first malloc and the first free of a thread reach the slow
 * paths without any "initialised?" test on the fast path.
 */
#ifndef HS_THREAD_CACHE_H
#define HS_THREAD_CACHE_H

#include <stdint.h>

#include "base/hs_common.h"
#include "core/size_class.h"
#include "sampling.h"

enum hs_tc_state {
	HS_TC_EMPTY = 0,  /* static initial value */
	HS_TC_ACTIVE = 1, /* registered for the thread-exit destructor */
	HS_TC_DEAD = 2,	  /* thread exiting: no caching any more */
};

/* hs_tcache_t.refilled[cls] bits */
#define HS_TC_REFILLED 1      /* a refill since the last overflow */
#define HS_TC_EVER_REFILLED 2 /* the thread has refilled the class */

typedef struct hs_tc_list {
	void *head;	     /* objects linked through their first word */
	uint32_t length;     /* objects on the list */
	uint32_t max_length; /* free flushes when length exceeds this */
} hs_tc_list_t;

typedef struct hs_tcache {
	hs_sampler_t sampler;		    /* owned by the sampling side */
	hs_tc_list_t lists[HS_NUM_CLASSES]; /* [0] stays empty */
	uint32_t state;			    /* enum hs_tc_state */
	uint32_t shard;			    /* central list shard (refills) */
	uint8_t refilled[HS_NUM_CLASSES];   /* HS_TC_REFILLED | _EVER_ */
} hs_tcache_t;

extern HS_TLS hs_tcache_t hs_tc;

/* Out-of-line: makes tc usable (global init, limits, exit destructor).
 * Returns false while the allocator cannot be initialised. */
bool hs_tc_activate(hs_tcache_t *tc);

/* Refill list cls from the central list and pop one object; NULL on
 * ENOMEM.  Called only when the list is empty. */
void *hs_tc_refill(hs_tcache_t *tc, unsigned cls);

/* Free list cls overflowed (length > max_length): give a batch back.  A
 * list with no refill since its previous overflow (the thread only frees
 * that class: objects other threads allocated) is then limited to one
 * batch; the next refill restores the class's max_cached. */
void hs_tc_overflow(hs_tcache_t *tc, unsigned cls);

/* Gives every cached object of the calling thread back, and every batch
 * in the central transfer caches to its spans (malloc_trim). */
void hs_tc_flush_current(void);

#endif /* HS_THREAD_CACHE_H */
