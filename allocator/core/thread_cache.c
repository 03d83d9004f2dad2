/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/thread_cache.c - the out-of-line parts of the thread cache:
 * activation, refill from and overflow to the central free lists, and
 * the thread-exit destructor that returns everything.
 *
 * List limits adapt in one way: a class the thread only frees (two
 * overflows with no refill between them) keeps at most one batch, not
 * max_cached (2 batches for small classes); a refill restores it.
 * thread_churn's joining thread frees half of every worker's objects and
 * cached up to 64 of each class; tried first, TCMalloc's slow start
 * (every list from 1 up) made refills smaller than a batch, which cannot
 * take a transfer-cache batch, and its RSS went from 2.7 to 8 MB.
 */
#include <pthread.h>

#include "base/assert.h"
#include "core/central_freelist.h"
#include "core/init.h"
#include "core/thread_cache.h"

HS_TLS hs_tcache_t hs_tc;

/* A thread's first refill of a class takes at most this many bytes of
 * objects (at least one), later ones a whole batch.  A batch is ~64 KiB
 * for the classes above 2 KiB, and carving it writes the link word of
 * each object: a program's one stdio buffer (malloc(4096)) made 64 KiB
 * of the heap resident, against 4 KiB for glibc.  Only the first: the
 * slow start tried before (every refill from one object up) cost
 * thread_churn 2.7 -> 8 MB, as refills below a batch carved new spans
 * while the transfer cache held batches; a short refill now takes a
 * transfer-cache batch when its shard has no span with free objects
 * (hs_central_remove_range). */
#define FIRST_REFILL_BYTES 8192

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

static void flush_all(hs_tcache_t *tc)
{
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		release_n(&tc->lists[c], c, tc->lists[c].length);
}

bool hs_tc_activate(hs_tcache_t *tc)
{
	if (tc->state != HS_TC_EMPTY)
		return true;
	if (!hs_init_global())
		return false;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		tc->lists[c].max_length = hs_classes[c].max_cached;
	tc->shard = hs_central_shard_get();
	tc->state = HS_TC_ACTIVE;
	/* may calloc (keys >= 32): tc is consistent by now, no lock held */
	hs_tc_register_exit(tc);
	return true;
}

HS_NOINLINE void *hs_tc_refill(hs_tcache_t *tc, unsigned cls)
{
	hs_tc_list_t *l = &tc->lists[cls];
	hs_assert(cls > 0 && cls < HS_NUM_CLASSES);
	hs_assert_internal(l->head == NULL && l->length == 0);
	int want = 1;
	if (tc->state == HS_TC_ACTIVE) {
		want = hs_classes[cls].batch;
		if (!(tc->refilled[cls] & HS_TC_EVER_REFILLED)) {
			/* the thread's first objects of the class: at most
			 * FIRST_REFILL_BYTES, as carving links (writes)
			 * every object handed out */
			size_t cap = FIRST_REFILL_BYTES / hs_classes[cls].size;
			if (cap < 1)
				cap = 1;
			if ((size_t)want > cap)
				want = (int)cap;
		}
		tc->refilled[cls] = HS_TC_REFILLED | HS_TC_EVER_REFILLED;
		l->max_length = hs_classes[cls].max_cached;
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

HS_NOINLINE void hs_tc_overflow(hs_tcache_t *tc, unsigned cls)
{
	hs_tc_list_t *l = &tc->lists[cls];
	if (tc->state == HS_TC_EMPTY) {
		/* The thread's first call is a free: of an object another
		 * thread allocated, handed over.  Not cached: the thread's
		 * first malloc of that class would get it back and write to
		 * a cache line the other thread's neighbouring objects live
		 * on (false_sharing's passive phase, Hoard's cache-scratch). */
		hs_tc_activate(tc);
		release_n(l, cls, l->length);
		return;
	}
	if (tc->state != HS_TC_ACTIVE) {
		release_n(l, cls, l->length);
		return;
	}
	if (l->length <= l->max_length)
		return;
	uint32_t batch = hs_classes[cls].batch, n = batch;
	if (n > l->length)
		n = l->length;
	release_n(l, cls, n);
	if (!(tc->refilled[cls] & HS_TC_REFILLED) && batch < l->max_length)
		l->max_length = batch; /* free-only: one batch is enough */
	tc->refilled[cls] &= (uint8_t)~HS_TC_REFILLED;
}

void hs_tc_flush_current(void)
{
	flush_all(&hs_tc);
	hs_central_drain();
}

void hs_tc_thread_exit(void *arg)
{
	hs_tcache_t *tc = arg;
	if (tc->state == HS_TC_ACTIVE)
		hs_central_shard_put(tc->shard);
	tc->state = HS_TC_DEAD;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++)
		tc->lists[c].max_length = 0;
	flush_all(tc);
	/* every central list, now that this thread's objects are back */
	hs_assert_expensive(hs_central_is_valid());
}
