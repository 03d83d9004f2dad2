/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/span.h - the span (a run of heapscope pages) and the metadata
 * arena spans and pagemap nodes come from (never from malloc).
 */
#ifndef HS_SPAN_H
#define HS_SPAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"

enum hs_span_location {
	HS_SPAN_IN_USE = 1,   /* handed out: small-object span or large block */
	HS_SPAN_FREE = 2,     /* in the page heap, pages committed */
	HS_SPAN_RELEASED = 3, /* in the page heap, pages given back to the OS */
};

typedef struct hs_span {
	uintptr_t start;      /* first page number (address >> 13) */
	size_t npages;	      /* length in heapscope pages */
	struct hs_span *next; /* page heap or central free list links */
	struct hs_span *prev;
	/* small-object spans (size_class != 0), guarded by the class lock */
	void *freelist;	     /* freed objects of this span */
	/* the last object on freelist (meaningless while it is empty): a
	 * refill takes a whole list with no walk, as its length is known
	 * (the span's objects - carve_left - allocated) */
	void *free_tail;
	/* never-used objects left, carved from the end of the used ones:
	 * the next is at objects - carve_left (in address order) */
	uint32_t carve_left;
	union {
		uint32_t allocated; /* small IN_USE: objects out of the span */
		uint32_t free_ms;   /* FREE: when the page heap got it (ms,
				     * coarse monotonic clock, wraps), for
				     * releasing the oldest spans first */
	};
	uint8_t size_class; /* 0 = large block or free span */
	uint8_t location;   /* enum hs_span_location */
	uint8_t in_list;    /* on the central nonempty list */
	uint8_t zeroed;	    /* all bytes known zero (pages untouched) when
			     * the page heap handed it out: calloc skips a
			     * large block's memset, carving populates a
			     * small span's pages (central_freelist.c) */
	uint8_t shard;	    /* small: central list shard the span is on */
	/* 64-byte aligned: the pagemap's entries use the low bits */
} __attribute__((aligned(64))) hs_span_t;

static inline void *hs_span_addr(const hs_span_t *s)
{
	return (void *)(s->start << HS_PAGE_SHIFT);
}

static inline size_t hs_span_bytes(const hs_span_t *s)
{
	return s->npages << HS_PAGE_SHIFT;
}

/* New zeroed span object / give one back.  NULL when the OS refuses
 * memory.  Thread-safe (metadata lock). */
hs_span_t *hs_span_new(void);
void hs_span_delete(hs_span_t *s);

/* A few span objects kept by a caller that serialises its own calls
 * (the page heap, under its lock): a split or a merge of free spans
 * gets or drops one without the metadata lock, which is taken once per
 * HS_SPAN_STASH / 2 objects (a pthread mutex: ~95 of the ~500
 * instructions of a small span's trip from the page heap).
 * The kept objects look deleted (location 0) and count as live for
 * hs_span_trim until hs_span_stash_flush. */
#define HS_SPAN_STASH 32
typedef struct hs_span_stash {
	uint32_t n;
	hs_span_t *obj[HS_SPAN_STASH];
} hs_span_stash_t;

/* A zeroed span object from st (refilled from the arena when empty);
 * NULL on ENOMEM. */
hs_span_t *hs_span_stash_new(hs_span_stash_t *st);
/* s (deleted) into st (half of a full st goes back to the arena). */
void hs_span_stash_delete(hs_span_stash_t *st, hs_span_t *s);
/* Every object of st to hs_span_delete (before hs_span_trim). */
void hs_span_stash_flush(hs_span_stash_t *st);

/* Gives back to the OS (MADV_DONTNEED) the 4 KiB pages of span objects
 * that hold no live span; later hs_span_new calls reuse them.  Result:
 * bytes given back.  Thread-safe (metadata lock). */
size_t hs_span_trim(void);

/* Zeroed metadata memory, never freed: 64-byte aligned, 4 KiB aligned
 * (and whole pages) when size >= 4 KiB.  NULL on ENOMEM.  Thread-safe
 * (metadata lock); _locked: the caller holds it (hs_meta_lock).  The
 * allocations under 4 KiB are the transfer caches' slot arrays only, so
 * a page such an array touches holds no other metadata:
 * hs_central_drain gives those pages back when every cache is empty. */
void *hs_meta_alloc(size_t size);
void *hs_meta_alloc_locked(size_t size);

/* fork handlers for the metadata lock */
void hs_meta_lock(void);
void hs_meta_unlock(void);
void hs_meta_reinit(void);

#endif /* HS_SPAN_H */
