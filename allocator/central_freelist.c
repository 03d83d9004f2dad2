/* SPDX-License-Identifier: MIT */
/*
 * allocator/central_freelist.c - per-class lists of spans with free
 * objects.  A span hands out objects from its own free list first, then
 * carves never-used objects from its end (so fresh spans are not touched
 * all at once).  When the last object of a span comes back, the span goes
 * back to the page heap.
 */
#include <pthread.h>

#include "central_freelist.h"
#include "internal.h"
#include "page_heap.h"
#include "pagemap.h"
#include "stats.h"

typedef struct central {
	pthread_mutex_t lock;
	hs_span_t *nonempty; /* spans with free or uncarved objects */
} __attribute__((aligned(64))) central_t;

static central_t centrals[HS_NUM_CLASSES] = {
	[0 ... HS_NUM_CLASSES - 1] = {PTHREAD_MUTEX_INITIALIZER, NULL},
};

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
static bool populate(central_t *c, unsigned cls)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	hs_span_t *s = hs_page_heap_alloc(ci->pages, 1);
	if (!s)
		return false;
	char *base = hs_span_addr(s);
	s->freelist = NULL;
	s->carve = base;
	s->carve_end = base + (size_t)ci->objects * ci->size;
	s->allocated = 0;
	/* publish the class before any object of the span escapes */
	__atomic_store_n(&s->size_class, (uint8_t)cls, __ATOMIC_RELEASE);
	link_span(c, s);
	hs_stat_add(HS_STAT_small_span_bytes, (int64_t)hs_span_bytes(s));
	hs_stat_add(HS_STAT_central_free_bytes,
		    (int64_t)ci->objects * ci->size);
	return true;
}

int hs_central_remove_range(unsigned cls, void **head, int n)
{
	central_t *c = &centrals[cls];
	const size_t size = hs_classes[cls].size;
	void *chain = NULL;
	int got = 0;
	pthread_mutex_lock(&c->lock);
	while (got < n) {
		hs_span_t *s = c->nonempty;
		if (!s) {
			if (!populate(c, cls))
				break;
			s = c->nonempty;
		}
		while (got < n) {
			void *obj;
			if (s->freelist) {
				obj = s->freelist;
				s->freelist = *(void **)obj;
			} else if (s->carve < s->carve_end) {
				obj = s->carve;
				s->carve += size;
			} else {
				break;
			}
			*(void **)obj = chain;
			chain = obj;
			s->allocated++;
			got++;
		}
		if (!s->freelist && s->carve >= s->carve_end)
			unlink_span(c, s);
	}
	pthread_mutex_unlock(&c->lock);
	hs_stat_add(HS_STAT_central_free_bytes, -(int64_t)(got * size));
	*head = chain;
	return got;
}

void hs_central_insert_range(unsigned cls, void *head, int n)
{
	central_t *c = &centrals[cls];
	const hs_class_info_t *ci = &hs_classes[cls];
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < n; i++) {
		void *obj = head;
		head = *(void **)obj;
		hs_span_t *s = hs_pagemap_lookup(obj);
		*(void **)obj = s->freelist;
		s->freelist = obj;
		s->allocated--;
		if (s->allocated == 0) {
			if (s->in_list)
				unlink_span(c, s);
			hs_stat_add(HS_STAT_small_span_bytes,
				    -(int64_t)hs_span_bytes(s));
			hs_stat_add(HS_STAT_central_free_bytes,
				    -(int64_t)(ci->objects - 1) * ci->size);
			__atomic_store_n(&s->size_class, 0, __ATOMIC_RELAXED);
			hs_page_heap_free(s);
			continue;
		}
		hs_stat_add(HS_STAT_central_free_bytes, (int64_t)ci->size);
		if (!s->in_list)
			link_span(c, s);
	}
	pthread_mutex_unlock(&c->lock);
}

int hs_central_is_valid(void)
{
	int ok = 1;
	for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++) {
		central_t *c = &centrals[cls];
		const hs_class_info_t *ci = &hs_classes[cls];
		pthread_mutex_lock(&c->lock);
		for (hs_span_t *s = c->nonempty; s; s = s->next) {
			if (s->size_class != cls || !s->in_list ||
			    s->location != HS_SPAN_IN_USE ||
			    s->npages != ci->pages ||
			    hs_pagemap_get(s->start) != s ||
			    s->allocated == 0 || s->allocated > ci->objects ||
			    (!s->freelist && s->carve >= s->carve_end))
				ok = 0;
		}
		pthread_mutex_unlock(&c->lock);
	}
	return ok;
}

void hs_central_lock_all(void)
{
	for (unsigned i = 0; i < HS_NUM_CLASSES; i++)
		pthread_mutex_lock(&centrals[i].lock);
}

void hs_central_unlock_all(void)
{
	for (unsigned i = HS_NUM_CLASSES; i-- > 0;)
		pthread_mutex_unlock(&centrals[i].lock);
}

void hs_central_reinit(void)
{
	for (unsigned i = 0; i < HS_NUM_CLASSES; i++)
		pthread_mutex_init(&centrals[i].lock, NULL);
}
