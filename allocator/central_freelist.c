/* SPDX-License-Identifier: MIT */
/*
 * allocator/central_freelist.c - per-class, per-shard lists of spans with
 * free objects.  A span hands out objects from its own free list first,
 * then carves never-used objects from its end (so fresh spans are not
 * touched all at once).  When the last object of a span comes back, the
 * span goes back to the page heap.  Shards: see central_freelist.h.
 */
#include <pthread.h>
#include <sched.h>

#include "central_freelist.h"
#include "internal.h"
#include "page_heap.h"
#include "pagemap.h"
#include "stats.h"

typedef struct central {
	pthread_mutex_t lock;
	hs_span_t *nonempty; /* spans with free or uncarved objects */
} __attribute__((aligned(64))) central_t;

#define NSH HS_CENTRAL_MAX_SHARDS

static central_t centrals[HS_NUM_CLASSES][NSH] = {
	[0 ... HS_NUM_CLASSES - 1] = {[0 ... NSH - 1] = {
					      PTHREAD_MUTEX_INITIALIZER, NULL}},
};

/* Shards in use: twice the CPUs this process may run on (the main thread
 * is often idle next to a pool of one thread per CPU), 2 .. NSH.  0 until
 * the first hs_central_shard_get. */
static unsigned nshards;
/* Live threads per shard (activated caches not yet exited). */
static unsigned shard_threads[NSH];

static unsigned count_shards(void)
{
	cpu_set_t set;
	int ncpu = 0;
	/* a system call, no allocation (sysconf may read /sys via stdio) */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		ncpu = CPU_COUNT(&set);
	unsigned n = ncpu > 0 ? 2 * (unsigned)ncpu : 2;
	return n > NSH ? NSH : n;
}

unsigned hs_central_shard_get(void)
{
	unsigned n = __atomic_load_n(&nshards, __ATOMIC_RELAXED);
	if (n == 0) {
		n = count_shards();
		__atomic_store_n(&nshards, n, __ATOMIC_RELAXED);
	}
	/* racy minimum: two threads starting together may pick the same
	 * shard, which is only slower, never wrong */
	unsigned best = 0, best_count = ~0u;
	for (unsigned i = 0; i < n; i++) {
		unsigned c = __atomic_load_n(&shard_threads[i], __ATOMIC_RELAXED);
		if (c < best_count) {
			best = i;
			best_count = c;
		}
	}
	__atomic_fetch_add(&shard_threads[best], 1, __ATOMIC_RELAXED);
	return best;
}

void hs_central_shard_put(unsigned shard)
{
	if (shard >= NSH)
		return;
	/* saturating: a fork child starts again from zero counts */
	unsigned c = __atomic_load_n(&shard_threads[shard], __ATOMIC_RELAXED);
	while (c && !__atomic_compare_exchange_n(&shard_threads[shard], &c,
						 c - 1, true, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		;
}

static void link_span(central_t *c, hs_span_t *s)
{
	s->prev = NULL;
	s->next = c->nonempty;
	if (c->nonempty)
		c->nonempty->prev = s;
	c->nonempty = s;
	s->in_list = 1;
}

static void unlink_span(central_t *c, hs_span_t *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		c->nonempty = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
	s->in_list = 0;
}

/* A new span for class cls, on the nonempty list.  false on ENOMEM. */
static bool populate(central_t *c, unsigned cls, unsigned shard)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	hs_span_t *s = hs_page_heap_alloc(ci->pages, 1);
	if (!s)
		return false;
	char *base = hs_span_addr(s);
	s->freelist = NULL;
	s->carve = base;
	s->carve_left = ci->objects;
	s->allocated = 0;
	s->shard = (uint8_t)shard;
	/* publish the class before any object of the span escapes */
	__atomic_store_n(&s->size_class, (uint8_t)cls, __ATOMIC_RELEASE);
	link_span(c, s);
	hs_stat_add(HS_STAT_small_span_bytes, (int64_t)hs_span_bytes(s));
	hs_stat_add(HS_STAT_central_free_bytes,
		    (int64_t)ci->objects * ci->size);
	return true;
}

int hs_central_remove_range(unsigned cls, unsigned shard, void **head, int n)
{
	if (shard >= NSH)
		shard = 0;
	central_t *c = &centrals[cls][shard];
	const size_t size = hs_classes[cls].size;
	void *chain = NULL;
	int got = 0;
	pthread_mutex_lock(&c->lock);
	while (got < n) {
		hs_span_t *s = c->nonempty;
		if (!s) {
			if (!populate(c, cls, shard))
				break;
			s = c->nonempty;
		}
		while (got < n) {
			void *obj;
			if (s->freelist) {
				obj = s->freelist;
				s->freelist = *(void **)obj;
			} else if (s->carve_left) {
				obj = s->carve;
				s->carve += size;
				s->carve_left--;
			} else {
				break;
			}
			*(void **)obj = chain;
			chain = obj;
			s->allocated++;
			got++;
		}
		if (!s->freelist && !s->carve_left)
			unlink_span(c, s);
	}
	pthread_mutex_unlock(&c->lock);
	hs_stat_add(HS_STAT_central_free_bytes, -(int64_t)(got * size));
	*head = chain;
	return got;
}

void hs_central_insert_range(unsigned cls, void *head, int n)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	central_t *c = NULL; /* the shard lock held */
	int64_t free_delta = 0, span_delta = 0;
	for (int i = 0; i < n; i++) {
		void *obj = head;
		head = *(void **)obj;
		hs_span_t *s = hs_pagemap_lookup(obj);
		/* a span's shard is fixed while it has objects out */
		central_t *sc = &centrals[cls][s->shard];
		if (sc != c) {
			if (c)
				pthread_mutex_unlock(&c->lock);
			c = sc;
			pthread_mutex_lock(&c->lock);
		}
		*(void **)obj = s->freelist;
		s->freelist = obj;
		s->allocated--;
		if (s->allocated == 0) {
			if (s->in_list)
				unlink_span(c, s);
			span_delta -= (int64_t)hs_span_bytes(s);
			free_delta -= (int64_t)(ci->objects - 1) * ci->size;
			__atomic_store_n(&s->size_class, 0, __ATOMIC_RELAXED);
			hs_page_heap_free(s);
			continue;
		}
		free_delta += (int64_t)ci->size;
		if (!s->in_list)
			link_span(c, s);
	}
	if (c)
		pthread_mutex_unlock(&c->lock);
	/* once per batch: the statistics' cache line is shared by all */
	if (span_delta)
		hs_stat_add(HS_STAT_small_span_bytes, span_delta);
	if (free_delta)
		hs_stat_add(HS_STAT_central_free_bytes, free_delta);
}

int hs_central_is_valid(void)
{
	int ok = 1;
	for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++) {
		const hs_class_info_t *ci = &hs_classes[cls];
		for (unsigned sh = 0; sh < NSH; sh++) {
			central_t *c = &centrals[cls][sh];
			pthread_mutex_lock(&c->lock);
			for (hs_span_t *s = c->nonempty; s; s = s->next) {
				if (s->size_class != cls || !s->in_list ||
				    s->shard != sh ||
				    s->location != HS_SPAN_IN_USE ||
				    s->npages != ci->pages ||
				    hs_pagemap_get(s->start) != s ||
				    s->allocated == 0 ||
				    s->allocated > ci->objects ||
				    s->allocated + s->carve_left > ci->objects ||
				    (!s->freelist && !s->carve_left))
					ok = 0;
			}
			pthread_mutex_unlock(&c->lock);
		}
	}
	return ok;
}

void hs_central_lock_all(void)
{
	for (unsigned i = 0; i < HS_NUM_CLASSES; i++)
		for (unsigned sh = 0; sh < NSH; sh++)
			pthread_mutex_lock(&centrals[i][sh].lock);
}

void hs_central_unlock_all(void)
{
	for (unsigned i = HS_NUM_CLASSES; i-- > 0;)
		for (unsigned sh = NSH; sh-- > 0;)
			pthread_mutex_unlock(&centrals[i][sh].lock);
}

void hs_central_reinit(void)
{
	for (unsigned i = 0; i < HS_NUM_CLASSES; i++)
		for (unsigned sh = 0; sh < NSH; sh++)
			pthread_mutex_init(&centrals[i][sh].lock, NULL);
	/* the child has one thread: the parent's counts mean nothing */
	for (unsigned sh = 0; sh < NSH; sh++)
		shard_threads[sh] = 0;
}
