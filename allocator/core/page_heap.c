/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/page_heap.c - span allocation from free lists indexed by
 * length (exact lists below MAX_LIST pages, one best-fit list above),
 * kept separately for committed and released (MADV_DONTNEED) spans.
 *
 * Free spans coalesce with neighbours in the same state only, so the
 * committed / released accounting stays exact.  New OS memory enters as
 * one released span (it is not resident until touched).  Release policy
 * (page_release.c): committed free memory up to
 * HEAPSCOPE_RELEASE_RATE is kept; above it, spans free for a second go
 * back to the OS, oldest first, and at once whatever exceeds twice the
 * bytes in use; a span cut from released memory first releases as much
 * committed free memory (the footprint grows only by what the free
 * spans could not serve); malloc_trim(0) releases everything.  New memory comes
 * in 2 MiB steps from a 64 MiB chunk of address space (page_grow.c).  Only the
 * excess goes, oldest first: a span just freed is the one the next request of
 * that size reuses, and releasing it (or everything down to a low-water
 * mark) turned each free/malloc pair of a large block into a page fault
 * per 4 KiB (large_blocks: 3x tcmalloc's faults).
 *
 * Pagemap invariant: every page of a small-object span maps to it; the
 * first and last pages of a large span or of a free span map to it and
 * its other entries are NULL.  So every non-NULL entry names the span
 * that covers its page (no stale pointer to a span object since reused:
 * free() of an interior pointer of a large block finds NULL), and a
 * large span costs two entries whatever its size, as in tcmalloc.
 * Setting every entry of a large span wrote 8 bytes per 8 KiB page:
 * malloc(64 GiB) committed 64 MiB of pagemap leaves and took 130 ms,
 * malloc(1 TiB) got the process OOM-killed.  Each operation below keeps
 * the invariant with O(1) entries, except a small span, which maps (and
 * on free clears) its few pages.
 */
#include <pthread.h>
#include <stdint.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "base/options.h"
#include "base/os.h"
#include "base/stats.h"
#include "core/page_heap.h"
#include "core/page_heap_internal.h"
#include "core/pagemap.h"

static pthread_mutex_t heap_lock = HS_MUTEX_INIT;
hs_span_t *hs_ph_lists[2][MAX_LIST + 1]; /* [MAX_LIST]: >= MAX_LIST pages */
/* Bit n of nonempty[k] set iff lists[k][n] has a span: a best-fit search
 * is a few word scans instead of up to 128 list heads per kind. */
#define NWORDS ((MAX_LIST + 1 + 63) / 64)
static uint64_t nonempty[2][NWORDS];
/* span objects for splits and merges, under heap_lock (core/span.h) */
static hs_span_stash_t stash;

static int kind_of(const hs_span_t *s)
{
	return s->location == HS_SPAN_RELEASED ? RELEASED : COMMITTED;
}

static size_t index_of(const hs_span_t *s)
{
	return s->npages < MAX_LIST ? s->npages : MAX_LIST;
}

static hs_span_t **list_of(hs_span_t *s)
{
	return &hs_ph_lists[kind_of(s)][index_of(s)];
}

static void list_insert(hs_span_t *s)
{
	hs_span_t **head = list_of(s);
	size_t i = index_of(s);
	nonempty[kind_of(s)][i / 64] |= (uint64_t)1 << (i % 64);
	s->prev = NULL;
	s->next = *head;
	if (*head)
		(*head)->prev = s;
	*head = s;
	hs_stat_add(s->location == HS_SPAN_RELEASED
			    ? HS_STAT_pageheap_released_bytes
			    : HS_STAT_pageheap_free_bytes,
		    (int64_t)hs_span_bytes(s));
	hs_stat_add(HS_STAT_pageheap_free_count, 1);
}

void hs_ph_list_remove(hs_span_t *s)
{
	hs_span_t **head = list_of(s);
	if (s->prev)
		s->prev->next = s->next;
	else
		*head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
	if (!*head) {
		size_t i = index_of(s);
		nonempty[kind_of(s)][i / 64] &= ~((uint64_t)1 << (i % 64));
	}
	hs_stat_add(s->location == HS_SPAN_RELEASED
			    ? HS_STAT_pageheap_released_bytes
			    : HS_STAT_pageheap_free_bytes,
		    -(int64_t)hs_span_bytes(s));
	hs_stat_add(HS_STAT_pageheap_free_count, -1);
}

/* Maps the first and last pages of s to `to` (s or NULL). */
static void set_edges(const hs_span_t *s, hs_span_t *to)
{
	hs_pagemap_set(s->start, to);
	hs_pagemap_set(s->start + s->npages - 1, to);
}

/* Puts s (not on any list; its edges mapped, interior NULL) into the
 * free lists in state loc, merging it with free neighbours in the same
 * state.  The edges that end up inside the merged span are cleared. */
void hs_ph_free_locked(hs_span_t *s, uint8_t loc)
{
	s->location = loc;
	s->size_class = 0;
	hs_span_t *prev = hs_pagemap_get(s->start - 1);
	if (prev && prev != s && prev->location == loc &&
	    prev->start + prev->npages == s->start) {
		hs_ph_list_remove(prev);
		set_edges(prev, NULL);
		set_edges(s, NULL);
		s->start = prev->start;
		s->npages += prev->npages;
		hs_span_stash_delete(&stash, prev);
	}
	hs_span_t *next = hs_pagemap_get(s->start + s->npages);
	if (next && next != s && next->location == loc &&
	    next->start == s->start + s->npages) {
		hs_ph_list_remove(next);
		set_edges(next, NULL);
		set_edges(s, NULL);
		s->npages += next->npages;
		hs_span_stash_delete(&stash, next);
	}
	set_edges(s, s);
	s->free_ms = hs_clock_coarse_ms();
	list_insert(s);
}

hs_span_t *hs_ph_split_tail_locked(hs_span_t *s, size_t npages)
{
	hs_assert_internal(npages > 0 && npages < s->npages);
	hs_span_t *t = hs_span_stash_new(&stash);
	if (!t)
		return NULL;
	hs_ph_list_remove(s);
	s->npages -= npages;
	t->start = s->start + s->npages;
	t->npages = npages;
	t->location = s->location;
	t->size_class = 0;
	set_edges(s, s);
	set_edges(t, t);
	list_insert(s); /* keeps its free_ms */
	return t;
}

/* Best fit among the spans of list kind k (COMMITTED or RELEASED). */
static hs_span_t *find_kind_locked(int k, size_t npages)
{
	if (npages < MAX_LIST) {
		size_t w = npages / 64;
		uint64_t bits =
			nonempty[k][w] & (~(uint64_t)0 << (npages % 64));
		for (;;) {
			if (bits) {
				size_t n =
					w * 64 + (size_t)__builtin_ctzll(bits);
				if (n < MAX_LIST)
					return hs_ph_lists[k][n];
				break; /* only the >= MAX_LIST list is left */
			}
			if (++w == NWORDS)
				break;
			bits = nonempty[k][w];
		}
	}
	hs_span_t *best = NULL;
	for (hs_span_t *s = hs_ph_lists[k][MAX_LIST]; s; s = s->next)
		if (s->npages >= npages &&
		    (!best || s->npages < best->npages ||
		     (s->npages == best->npages && s->start < best->start)))
			best = s;
	return best;
}

/* A free span of >= npages pages: the best committed fit, else the best
 * released one.  Committed memory first, even when a released span fits
 * more tightly: a released span costs a page fault per 4 KiB touched,
 * and committed spans left aside pile up until the release policy
 * madvises them away, the fault-and-release cycle that made mixed-size
 * workloads several times slower than their peers. */
static hs_span_t *find_locked(size_t npages)
{
	hs_span_t *s = find_kind_locked(COMMITTED, npages);
	return s ? s : find_kind_locked(RELEASED, npages);
}

/* Cuts the first npages pages off free span s; the rest stays free in
 * the same state.  Returns the IN_USE span, edges mapped. */
static hs_span_t *carve_locked(hs_span_t *s, size_t npages)
{
	uint8_t loc = s->location;
	hs_span_t *t;
	if (s->npages - npages >= MAX_LIST && (t = hs_span_stash_new(&stash))) {
		/* the rest stays on the list s is on: the new span is cut
		 * off its front and s keeps its place, with no list remove
		 * and insert (a small span's trip: ~80 instructions less) */
		t->start = s->start;
		t->npages = npages;
		s->start += npages;
		s->npages -= npages;
		hs_stat_add(loc == HS_SPAN_RELEASED
				    ? HS_STAT_pageheap_released_bytes
				    : HS_STAT_pageheap_free_bytes,
			    -(int64_t)hs_span_bytes(t));
		hs_pagemap_set(s->start, s);
		set_edges(t, t);
		s = t;
		goto done;
	}
	hs_ph_list_remove(s);
	if (s->npages > npages) {
		hs_span_t *rest = hs_span_stash_new(&stash);
		if (rest) {
			rest->start = s->start + npages;
			rest->npages = s->npages - npages;
			rest->location = loc;
			set_edges(rest, rest);
			list_insert(rest);
			s->npages = npages;
			set_edges(s, s);
		}
		/* without metadata the caller gets the whole span */
	}
done:
	s->location = HS_SPAN_IN_USE;
	s->zeroed = loc == HS_SPAN_RELEASED;
	return s;
}

/* Returns the first `pages` pages of IN_USE span s to the free lists
 * (state: loc) and keeps the rest in s. */
static void trim_head_locked(hs_span_t *s, size_t pages, uint8_t loc)
{
	hs_span_t *h = hs_span_stash_new(&stash);
	if (!h)
		return; /* keep the pages in s: wasteful, not wrong */
	h->start = s->start;
	h->npages = pages;
	s->start += pages;
	s->npages -= pages;
	hs_ph_free_locked(h, loc); /* maps h's edges: s's old first page */
	hs_pagemap_set(s->start, s);
}

static void trim_tail_locked(hs_span_t *s, size_t keep, uint8_t loc)
{
	hs_span_t *t = hs_span_stash_new(&stash);
	if (!t)
		return;
	t->start = s->start + keep;
	t->npages = s->npages - keep;
	s->npages = keep;
	hs_ph_free_locked(t, loc); /* maps t's edges: s's old last page */
	hs_pagemap_set(s->start + s->npages - 1, s);
}

/* The least n >= from (from >= 1) with a span on lists[k][n], or
 * MAX_LIST + 1 when there is none. */
static size_t next_list(int k, size_t from)
{
	for (size_t w = from / 64; w < NWORDS; w++) {
		uint64_t bits = nonempty[k][w];
		if (w == from / 64)
			bits &= ~(uint64_t)0 << (from % 64);
		if (bits)
			return w * 64 + (size_t)__builtin_ctzll(bits);
	}
	return MAX_LIST + 1;
}

/* Merges a run of adjacent free spans, committed and released mixed,
 * that covers at least want pages, into one free span, and returns it;
 * NULL when there is none.  Committed and released spans never coalesce
 * on free (so the accounting stays exact), which can leave a big
 * request with no single fit while the pieces side by side would do.
 * Releasing the committed pieces so they coalesce (gperftools
 * PageHeap::New does that) cost a page fault per 4 KiB of the block
 * just to make room: large_blocks at 2 threads released 3x its heap.
 * The merged span counts as committed unless every piece was released
 * (so it is not assumed zero); its released pages are then counted as
 * committed until the release policy or a trim madvises them again,
 * which is harmless.  Best fit: the shortest such run. */
static hs_span_t *merge_run_locked(size_t want)
{
	hs_span_t *best = NULL;
	size_t best_len = 0;
	/* the nonempty lists only: a scan of all 258 heads was ~1,600
	 * instructions a growth (xsltproc: 20 of them, 33,000) */
	for (int k = COMMITTED; k <= RELEASED; k++)
		for (size_t n = next_list(k, 1); n <= MAX_LIST;
		     n = next_list(k, n + 1))
			for (hs_span_t *s = hs_ph_lists[k][n]; s; s = s->next) {
				hs_span_t *p = hs_pagemap_get(s->start - 1);
				if (p && p != s &&
				    p->start + p->npages == s->start &&
				    (p->location == HS_SPAN_FREE ||
				     p->location == HS_SPAN_RELEASED))
					continue; /* not the start of a run */
				size_t len = s->npages;
				hs_span_t *nx;
				while (len < want &&
				       (nx = hs_pagemap_get(s->start + len)) &&
				       nx->start == s->start + len &&
				       (nx->location == HS_SPAN_FREE ||
					nx->location == HS_SPAN_RELEASED))
					len += nx->npages;
				if (len >= want && (!best || len < best_len)) {
					best = s;
					best_len = len;
				}
			}
	if (!best)
		return NULL;
	bool all_released = true;
	size_t len = 0;
	for (hs_span_t *s = best; len < best_len;) {
		hs_span_t *nx = hs_pagemap_get(s->start + s->npages);
		len += s->npages;
		all_released &= s->location == HS_SPAN_RELEASED;
		hs_ph_list_remove(s);
		set_edges(s, NULL); /* free_locked maps the run's edges */
		if (s != best)
			hs_span_stash_delete(&stash, s);
		s = nx;
	}
	best->npages = len;
	hs_ph_free_locked(best, all_released ? HS_SPAN_RELEASED : HS_SPAN_FREE);
	hs_stat_add(HS_STAT_pageheap_merge_count, 1);
	return find_locked(want);
}

/* A span of npages (start aligned to align_pages) from the free lists,
 * or NULL; small: map every page, with class cls and central-list shard
 * `shard` in the entries.  Caller holds heap_lock. */
static hs_span_t *alloc_locked(size_t npages, size_t align_pages, bool small,
			       unsigned cls, unsigned shard)
{
	if (align_pages < 1)
		align_pages = 1;
	size_t want = npages + align_pages - 1;
	if (npages == 0 || want < npages || want > ((size_t)1 << HS_PM_BITS))
		return NULL;
	hs_span_t *s = find_locked(want);
	if (!s)
		s = merge_run_locked(want);
	if (!s) {
		if (!hs_ph_grow_locked(want))
			return NULL;
		s = find_locked(want);
	}
	uint8_t loc = s->location;
	size_t fault_pages = loc == HS_SPAN_RELEASED ? npages : 0;
	if (align_pages == 1) {
		s = carve_locked(s, npages);
	} else {
		/* take a big enough run, then give back head and tail */
		s = carve_locked(s, want);
		size_t head = (align_pages - (s->start & (align_pages - 1))) &
			      (align_pages - 1);
		if (head)
			trim_head_locked(s, head, loc);
		if (s->start & (align_pages - 1)) {
			/* no metadata to split: fail cleanly */
			hs_ph_free_locked(s, loc);
			return NULL;
		}
		if (s->npages > npages)
			trim_tail_locked(s, npages, loc);
		s->zeroed = loc == HS_SPAN_RELEASED;
	}
	if (fault_pages)
		hs_ph_release_on_fault_locked(fault_pages << HS_PAGE_SHIFT);
	/* under the lock: hs_pagemap_trim must see the entries */
	if (small) {
		s->shard = (uint8_t)shard;
		hs_pagemap_set_range(s, cls);
	}
	hs_assert_internal(s->location == HS_SPAN_IN_USE &&
			   s->npages >= npages && s->size_class == 0 &&
			   !(s->start & (align_pages - 1)));
	return s;
}

static hs_span_t *large_head(void)
{
	return (hs_span_t *)(uintptr_t)hs_heap_map.large_head;
}

/* Puts large span s on the heap map's list of in-use large spans (linked
 * through its next/prev, free while it is in use).  Under heap_lock. */
static void large_link_locked(hs_span_t *s)
{
	hs_span_t *head;

	head = large_head();
	s->prev = NULL;
	s->next = head;
	if (head)
		head->prev = s;
	/* the count first: a reader that sees the head sees a count that
	 * covers it (abi.h) */
	__atomic_store_n(&hs_heap_map.large_count, hs_heap_map.large_count + 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&hs_heap_map.large_head, (uint64_t)(uintptr_t)s,
			 __ATOMIC_RELEASE);
}

static void large_unlink_locked(hs_span_t *s)
{
	if (s->next)
		s->next->prev = s->prev;
	if (s->prev)
		__atomic_store_n(&s->prev->next, s->next, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&hs_heap_map.large_head,
				 (uint64_t)(uintptr_t)s->next,
				 __ATOMIC_RELEASE);
	__atomic_store_n(&hs_heap_map.large_count, hs_heap_map.large_count - 1,
			 __ATOMIC_RELAXED);
	s->next = s->prev = NULL;
}

hs_span_t *hs_page_heap_alloc(size_t npages, size_t align_pages)
{
	pthread_mutex_lock(&heap_lock);
	hs_span_t *s = alloc_locked(npages, align_pages, false, 0, 0);
	if (s)
		large_link_locked(s);
	pthread_mutex_unlock(&heap_lock);
	hs_assert_expensive(hs_page_heap_is_valid());
	return s;
}

size_t hs_page_heap_alloc_small_n(size_t npages, unsigned cls, unsigned shard,
				  hs_span_t **out, size_t n)
{
	size_t got = 0;
	pthread_mutex_lock(&heap_lock);
	while (got < n &&
	       (out[got] = alloc_locked(npages, 1, true, cls, shard)))
		got++;
	pthread_mutex_unlock(&heap_lock);
	hs_assert_expensive(hs_page_heap_is_valid());
	return got;
}

hs_span_t *hs_page_heap_alloc_small(size_t npages)
{
	hs_span_t *s = NULL;
	hs_page_heap_alloc_small_n(npages, 0, 0, &s, 1);
	return s;
}

/* Gives IN_USE span s back; small: clear the interior entries first.
 * Caller holds heap_lock and runs the release policy afterwards. */
static void free_locked(hs_span_t *s, bool small)
{
	hs_assert(s->location == HS_SPAN_IN_USE);
	if (small && s->npages > 2)
		hs_pagemap_clear_range(s->start + 1, s->npages - 2);
	s->freelist = NULL;
	s->free_tail = NULL;
	s->carve_left = 0;
	s->shard = 0;
	s->allocated = 0;
	s->in_list = 0;
	hs_ph_free_locked(s, HS_SPAN_FREE);
}

void hs_page_heap_free(hs_span_t *s)
{
	pthread_mutex_lock(&heap_lock);
	large_unlink_locked(s);
	free_locked(s, false);
	hs_ph_release_policy_locked();
	pthread_mutex_unlock(&heap_lock);
	hs_assert_expensive(hs_page_heap_is_valid());
}

void hs_page_heap_free_small_list(hs_span_t *list)
{
	pthread_mutex_lock(&heap_lock);
	while (list) {
		hs_span_t *s = list;
		list = s->next; /* free_locked links s into a free list */
		free_locked(s, true);
	}
	hs_ph_release_policy_locked();
	pthread_mutex_unlock(&heap_lock);
	hs_assert_expensive(hs_page_heap_is_valid());
}

void hs_page_heap_free_small(hs_span_t *s)
{
	s->next = NULL;
	hs_page_heap_free_small_list(s);
}

bool hs_page_heap_try_grow(hs_span_t *s, size_t npages)
{
	if (npages <= s->npages || npages > ((size_t)1 << HS_PM_BITS))
		return npages <= s->npages;
	size_t extra = npages - s->npages;
	uintptr_t end = s->start + s->npages;
	pthread_mutex_lock(&heap_lock);
	hs_span_t *next = hs_pagemap_get(end);
	if (!next || next->start != end || next->npages < extra ||
	    (next->location != HS_SPAN_FREE &&
	     next->location != HS_SPAN_RELEASED)) {
		pthread_mutex_unlock(&heap_lock);
		return false;
	}
	uint8_t loc = next->location;
	hs_ph_list_remove(next);
	set_edges(next, NULL);
	if (next->npages > extra) {
		next->start += extra;
		next->npages -= extra;
		next->location = loc;
		set_edges(next, next);
		list_insert(next);
	} else {
		hs_span_stash_delete(&stash, next);
	}
	set_edges(s, NULL); /* its last page is inside it now */
	s->npages = npages;
	set_edges(s, s);
	pthread_mutex_unlock(&heap_lock);
	return true;
}

size_t hs_page_heap_release(size_t bytes)
{
	pthread_mutex_lock(&heap_lock);
	size_t done = hs_ph_release_locked(bytes);
	if (bytes == SIZE_MAX)
		hs_span_stash_flush(&stash); /* malloc_trim: before span trim */
	pthread_mutex_unlock(&heap_lock);
	return done;
}

void hs_page_heap_release_on_fault(size_t bytes)
{
	/* (read again under the lock) */
	if (hs_stat_get(HS_STAT_pageheap_free_bytes) <= 0)
		return;
	pthread_mutex_lock(&heap_lock);
	hs_ph_release_on_fault_locked(bytes);
	pthread_mutex_unlock(&heap_lock);
}

int hs_page_heap_is_valid(void)
{
	int ok = 1;
	pthread_mutex_lock(&heap_lock);
	for (int k = COMMITTED; k <= RELEASED; k++) {
		for (size_t n = 1; n <= MAX_LIST; n++) {
			int bit = (int)(nonempty[k][n / 64] >> (n % 64)) & 1;
			if (bit != (hs_ph_lists[k][n] != NULL))
				ok = 0;
			for (hs_span_t *s = hs_ph_lists[k][n]; s; s = s->next) {
				uint8_t want = k == RELEASED ? HS_SPAN_RELEASED
							     : HS_SPAN_FREE;
				if (s->location != want ||
				    (n < MAX_LIST && s->npages != n) ||
				    (n == MAX_LIST && s->npages < MAX_LIST) ||
				    hs_pagemap_get(s->start) != s ||
				    hs_pagemap_get(s->start + s->npages - 1) !=
					    s)
					ok = 0;
				/* neighbours in the same state must have
				 * been merged */
				hs_span_t *nx =
					hs_pagemap_get(s->start + s->npages);
				if (nx && nx->location == want &&
				    nx->start == s->start + s->npages)
					ok = 0;
			}
		}
	}
	pthread_mutex_unlock(&heap_lock);
	return ok;
}

void hs_page_heap_lock(void)
{
	pthread_mutex_lock(&heap_lock);
}

void hs_page_heap_unlock(void)
{
	pthread_mutex_unlock(&heap_lock);
}

void hs_page_heap_reinit(void)
{
	hs_mutex_reinit(&heap_lock);
}
