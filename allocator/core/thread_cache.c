/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/thread_cache.c - the out-of-line parts of the thread cache:
 * activation, refill from and overflow to the central free lists, and
 * the thread-exit destructor that returns everything.
 *
 * Caches come from the metadata arena (hs_meta_alloc: zeroed, never
 * freed) and are kept on a free list, under the metadata lock, for the
 * next thread: a program that creates threads one after another uses one
 * cache.  The lock is taken by the fork handlers, so the child's list
 * is consistent; the caches of threads that do not exist in the child
 * stay allocated, as their objects do.
 *
 * List limits adapt as TCMalloc's do, in both directions.  A refill of
 * a list at or above its class's max_cached, that the thread refilled
 * before, grows it by what it takes (the thread allocates the class in
 * bursts longer than its list; a streak's refills take several batches,
 * streak_want), up to LIST_CAP_OBJECTS and LIST_CAP_BYTES, while
 * the thread's budget of GROW_BYTES beyond max_cached lasts: glibc-simple's
 * bursts of 400 and 1600 objects went through the central list ~50 times
 * each.  An overflow with no refill since the previous one takes a batch
 * off the limit, down to one batch: a class the thread only frees (objects
 * other threads allocated) keeps one batch, as before, after two
 * overflows from max_cached (2 batches for small classes); one whose
 * overflows find the transfer cache full gives its whole list to the
 * spans each time and keeps a streak's refill (free_streak_limit).
 * thread_churn's joining thread frees half of every worker's objects and
 * cached up to 64 of each class; tried first, TCMalloc's slow start
 * (every list from 1 up) made refills smaller than a batch, which cannot
 * take a transfer-cache batch, and its RSS went from 2.7 to 8 MB.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "base/assert.h"
#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/init.h"
#include "core/span.h"
#include "core/thread_cache.h"

/* Read-only (.rodata): the cast that stores them in hs_thread.tc is safe
 * as nothing writes a cache that is not HS_TC_ACTIVE, and a bug that did
 * would fault instead of corrupting a list that every thread shares. */
const hs_tcache_t hs_tc_empty = {.state = HS_TC_EMPTY};
const hs_tcache_t hs_tc_dead = {.state = HS_TC_DEAD};

HS_TLS hs_thread_t hs_thread = {.tc = (hs_tcache_t *)&hs_tc_empty};

/* the whole static TLS must stay within 256 bytes (tests/test_tls_size.sh) */
_Static_assert(sizeof(hs_thread_t) <= 64, "keep the static TLS small");

static hs_tcache_t *free_caches; /* under the metadata lock */
static hs_tcache_t *all_caches;	 /* under the metadata lock */
static uint64_t ncaches;	 /* on all_caches */

/* A thread's refills of a class start slow: the first takes at most
 * FIRST_REFILL_BYTES of objects (at least one), and each later refill
 * whose take that cap cut doubles the cap, until a refill takes what it
 * asked for (a batch, or a streak's batches).  Carving writes the link
 * word of every object it hands out, so a take is resident at once: a
 * program's one stdio buffer (malloc(4096)) made 64 KiB resident when a
 * first refill took a batch; with the first at 8 KiB and the second a
 * whole batch, glibc-thread (mimalloc-bench: 1024 blocks of random sizes
 * per thread, ~60 classes each) kept ~500 KiB per thread cache, ~8 KiB a
 * class it holds a fraction of an object of.  Measured, 5 interleaved
 * runs (bench/ab_mimalloc_bench.sh): peak RSS glibc-thread -13 %,
 * espresso -9 %, cfrac -4 %; time within the runs' noise (larsonN-sized,
 * which makes threads one after another, +6 %).  The slow start tried
 * before (every refill from one object up) cost thread_churn 2.7 -> 8 MB,
 * as refills below a batch carved new spans while the transfer cache held
 * batches; a short refill now takes a transfer-cache batch when its shard
 * has no span with free objects (hs_central_remove_range). */
#define FIRST_REFILL_BYTES 1024

/* A class over ONCE_BYTES is not cached before the thread's second refill of
 * it: the list's limit stays 0, so the thread's frees of a class it took once
 * go back to the central list at once, and the span, emptied, to the page heap,
 * where any class can reuse its pages.  Cached, each such list kept its one
 * object (up to 256 KiB, 16 KiB or 1-3 objects per list above 1 KiB):
 * gcc (one thread) held 1.7 MiB in its thread cache at its peak RSS,
 * mostly single freed blocks of 12 classes of 15-256 KiB, and git's
 * repack 1.0 MiB (a counting shim read heapscope_get_allocator_stats at
 * each new peak of RSS). */
#define ONCE_BYTES 4096

/* The limit a list starts with in a new cache (hs_tc_activate). */
static uint32_t start_limit(unsigned cls)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	return ci->size > ONCE_BYTES ? 0 : ci->max_cached;
}

/* Growth of the lists beyond max_cached (hs_tc_refill): per list at most
 * this many objects and bytes, per thread at most GROW_BYTES in all. */
#define LIST_CAP_OBJECTS 4096u
#define LIST_CAP_BYTES ((size_t)256 << 10)
#define GROW_BYTES ((uint64_t)512 << 10)

/* A refill in an allocation streak (no overflow since the thread's
 * previous refill of the class: a tree being built) takes half the
 * list's limit, up to STREAK_BATCHES batches and STREAK_BYTES, instead
 * of one batch: fewer trips to the central list, each taking several
 * transfer-cache batches or carving a span's run at once.  Half, so the
 * frees that follow have room before the list overflows. */
#define STREAK_BATCHES 8u
#define STREAK_BYTES ((size_t)32 << 10)

static int streak_want(const hs_class_info_t *ci, uint32_t max_length)
{
	size_t w = max_length / 2, cap = STREAK_BYTES / ci->size;
	if (cap > (size_t)STREAK_BATCHES * ci->batch)
		cap = (size_t)STREAK_BATCHES * ci->batch;
	if (w > cap)
		w = cap;
	w -= w % ci->batch; /* limits move in batch steps */
	return w > ci->batch ? (int)w : (int)ci->batch;
}

/* The longest list class cls may grow to. */
static uint32_t list_cap(unsigned cls)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	size_t cap = LIST_CAP_BYTES / ci->size;
	if (cap > LIST_CAP_OBJECTS)
		cap = LIST_CAP_OBJECTS;
	return cap > ci->max_cached ? (uint32_t)cap : ci->max_cached;
}

/* Sets list cls's limit to max, giving back to (or taking from) the
 * thread's growth budget what it had (has) beyond max_cached. */
static void set_limit(hs_tcache_t *tc, unsigned cls, uint32_t max)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	hs_tc_list_t *l = &tc->lists[cls];
	if (l->max_length > ci->max_cached)
		tc->grow_left +=
			(uint64_t)(l->max_length - ci->max_cached) * ci->size;
	if (max > ci->max_cached)
		tc->grow_left -= (uint64_t)(max - ci->max_cached) * ci->size;
	l->max_length = max;
}

/* After a free streak's overflow gave the whole list to the spans: the
 * limit moves a batch toward a streak's refill (streak_want: 8 batches,
 * 32 KiB), not down to one batch, as the list holds nothing now: fewer,
 * longer trips (xsltproc frees its trees: 12.4 k overflows, each ~190
 * instructions besides the objects' own). */
static void free_streak_limit(hs_tcache_t *tc, unsigned cls)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	uint32_t w = (uint32_t)streak_want(ci, UINT32_MAX), max;
	max = tc->lists[cls].max_length;
	if (max > w)
		set_limit(tc, cls, max - ci->batch > w ? max - ci->batch : w);
	else if (max < w && tc->grow_left >= (uint64_t)ci->batch * ci->size)
		set_limit(tc, cls, max + ci->batch);
}

/* Gives the first n objects of list l (class cls) to the central list. */
static void release_n(hs_tc_list_t *l, unsigned cls, uint32_t n)
{
	if (n == 0)
		return;
	void *head = l->head, *last = head;
	for (uint32_t i = 1; i < n; i++)
		last = *(void **)last;
	l->head = *(void **)last;
	l->length -= n;
	hs_central_insert_range(cls, head, last, (int)n);
}

/* Remote list r of class cls back to its spans' shards: a batch of one
 * shard through hs_central_insert_range (its transfer cache may keep it
 * whole), else straight to the spans. */
static void remote_flush(hs_tc_remote_t *r, unsigned cls)
{
	uint32_t n = r->n;
	if (!n)
		return;
	void *head = r->head, *tail = r->tail;
	bool one_shard = r->shard != HS_TC_REMOTE_MIXED;
	r->head = r->tail = NULL;
	r->n = 0;
	if (one_shard)
		hs_central_insert_range(cls, head, tail, (int)n);
	else
		hs_central_insert_chain(cls, head, (int)n);
}

/* A free into a read-only cache (hs_tc_empty or hs_tc_dead): p goes back
 * at once; the empty one activates the thread's cache for its later
 * frees (hs_tc_overflow says why p itself is not cached). */
static void free_uncached(hs_tcache_t *tc, unsigned cls, void *p)
{
	if (tc->state == HS_TC_EMPTY)
		hs_tc_activate();
	hs_central_insert_range(cls, p, p, 1);
}

HS_HOT void hs_tc_remote_full(hs_tcache_t *tc, unsigned cls, unsigned shard,
			      void *p)
{
	if (tc->state != HS_TC_ACTIVE) {
		free_uncached(tc, cls, p);
		return;
	}
	hs_tc_remote_t *r = &tc->remote[cls];
	hs_tc_remote_link(r, shard, p);
	remote_flush(r, cls);
}

static void flush_all(hs_tcache_t *tc)
{
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		release_n(&tc->lists[c], c, tc->lists[c].length);
		remote_flush(&tc->remote[c], c);
	}
}

/* A cache from the free list, else fresh from the metadata arena (zeroed).
 * NULL on ENOMEM. */
static hs_tcache_t *cache_get(void)
{
	hs_meta_lock();
	hs_tcache_t *tc = free_caches;
	if (tc) {
		free_caches = tc->next_free;
		/* reused: refilled[] history; next_all stays (readers
		 * outside walk it at any time), so it is not cleared */
		memset(tc, 0, offsetof(hs_tcache_t, next_all));
	} else {
		tc = hs_meta_alloc_locked(sizeof(*tc));
		if (tc) {
			/* zeroed, lists empty: link it, then publish */
			tc->next_all = all_caches;
			all_caches = tc;
			hs_stats_publish_tcache((uint64_t)(uintptr_t)tc,
						++ncaches,
						offsetof(hs_tcache_t, next_all),
						offsetof(hs_tcache_t, lists),
						sizeof(hs_tc_list_t),
						offsetof(hs_tc_list_t, length));
		}
	}
	hs_meta_unlock();
	return tc;
}

static void cache_put(hs_tcache_t *tc)
{
	hs_meta_lock();
	tc->next_free = free_caches;
	free_caches = tc;
	hs_meta_unlock();
}

HS_NOINLINE bool hs_tc_activate(void)
{
	if (hs_thread.tc->state != HS_TC_EMPTY)
		return true;
	if (!hs_init_global())
		return false;
	hs_tcache_t *tc = cache_get();
	if (!tc)
		return false;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		tc->lists[c].max_length = start_limit(c);
		tc->remote[c].max = hs_classes[c].batch;
	}
	tc->shard = hs_central_shard_get();
	tc->grow_left = GROW_BYTES;
	tc->state = HS_TC_ACTIVE;
	hs_thread.tc = tc;
	hs_thread.shard_bits = tc->shard;
	/* may calloc (keys >= 32): tc is consistent by now, no lock held */
	hs_tc_register_exit(tc);
	return true;
}

HS_HOT HS_NOINLINE void *hs_tc_refill(hs_tcache_t *tc, unsigned cls)
{
	hs_tc_list_t *l = &tc->lists[cls];
	hs_assert(cls > 0 && cls < HS_NUM_CLASSES);
	hs_assert_internal(l->head == NULL && l->length == 0);
	int want = 1;
	if (tc->state == HS_TC_ACTIVE) {
		const hs_class_info_t *ci = &hs_classes[cls];
		want = ci->batch;
		/* the limit grows by what the refill takes (a batch, or a
		 * streak's batches), so the frees that follow a burst find
		 * room for it and for what the last refill left over */
		if (tc->refilled[cls] & HS_TC_REFILLED)
			want = streak_want(ci, l->max_length);
		/* the slow start: k stops below 10, as no take exceeds
		 * 512 KiB (2 objects of 256 KiB), so 6 bits hold it */
		unsigned k = tc->refilled[cls] >> HS_TC_COUNT_SHIFT;
		size_t cap = (size_t)FIRST_REFILL_BYTES << k;
		if (cap < (size_t)want * ci->size) {
			cap /= ci->size;
			want = cap < 1 ? 1 : (int)cap;
			tc->refilled[cls] += 1u << HS_TC_COUNT_SHIFT;
		}
		uint32_t step = (uint32_t)want;
		if (!(tc->refilled[cls] & HS_TC_EVER_REFILLED) &&
		    ci->size > ONCE_BYTES) {
			/* the first: the list stays at 0 (ONCE_BYTES) */
		} else if (l->max_length < ci->max_cached) {
			l->max_length = ci->max_cached;
		} else if (tc->refilled[cls] & HS_TC_EVER_REFILLED) {
			if (l->max_length + step > list_cap(cls) ||
			    tc->grow_left < (uint64_t)step * ci->size)
				step = ci->batch;
			if (l->max_length + step <= list_cap(cls) &&
			    tc->grow_left >= (uint64_t)step * ci->size)
				set_limit(tc, cls, l->max_length + step);
		}
		tc->refilled[cls] |= HS_TC_REFILLED | HS_TC_EVER_REFILLED;
	}
	void *chain, *tail;
	int got = hs_central_remove_range(cls, tc->shard, &chain, &tail, want);
	if (got == 0)
		return NULL;
	void *p = chain;
	if (got > 1) {
		/* keep all but the head: the tail's link is unspecified */
		*(void **)tail = l->head;
		l->head = *(void **)p;
		l->length += (uint32_t)(got - 1);
	}
	return p;
}

HS_HOT HS_NOINLINE void hs_tc_overflow(hs_tcache_t *tc, unsigned cls, void *p)
{
	if (tc->state != HS_TC_ACTIVE) {
		/* hs_tc_empty or hs_tc_dead (read-only): p goes back at once.
		 * The thread's first call is a free: of an object another
		 * thread allocated, handed over.  Not cached: the thread's
		 * first malloc of that class would get it back and write to
		 * a cache line the other thread's neighbouring objects live
		 * on (false_sharing's passive phase, Hoard's cache-scratch).
		 * Its later frees are cached. */
		free_uncached(tc, cls, p);
		return;
	}
	/* full (length == max_length): take p, then give a batch back */
	hs_tc_list_t *l = &tc->lists[cls];
	*(void **)p = l->head;
	l->head = p;
	l->length++;
	uint32_t batch = hs_classes[cls].batch, n = batch;
	if (n > l->length)
		n = l->length;
	bool whole = false;
	if (!(tc->refilled[cls] & HS_TC_REFILLED) &&
	    hs_central_tc_full(cls, p)) {
		/* a free streak (a tree freed) with the transfer cache full:
		 * a batch would go to its spans anyway, so the whole list
		 * goes, with no walk to cut it off (xsltproc: 178 -> ~40
		 * instructions per trip here) */
		void *head = l->head;
		n = l->length;
		l->head = NULL;
		l->length = 0;
		hs_central_insert_chain(cls, head, (int)n);
		free_streak_limit(tc, cls);
		whole = true;
	} else {
		release_n(l, cls, n);
	}
	if (!whole && !(tc->refilled[cls] & HS_TC_REFILLED) &&
	    l->max_length > batch) {
		/* a second overflow with no refill between: the thread frees
		 * more of the class than it takes, one batch less */
		uint32_t m = l->max_length - batch;
		set_limit(tc, cls, m > batch ? m : batch);
	}
	tc->refilled[cls] &= (uint8_t)~HS_TC_REFILLED;
}

void hs_tc_flush_current(void)
{
	flush_all(hs_thread.tc); /* no-op on the read-only caches */
	hs_central_drain();
}

void hs_tc_thread_exit(void *arg)
{
	hs_tcache_t *tc = arg;
	/* first: what runs from here on (the flush, later destructors)
	 * allocates and frees without a cache */
	hs_thread.tc = (hs_tcache_t *)&hs_tc_dead;
	hs_thread.shard_bits = 0;
	bool vacated = hs_central_shard_put(tc->shard);
	tc->state = HS_TC_DEAD;
	flush_all(tc);
	if (vacated)
		hs_central_shard_vacated(tc->shard);
	/* every central list, now that this thread's objects are back */
	hs_assert_expensive(hs_central_is_valid());
	cache_put(tc);
}
