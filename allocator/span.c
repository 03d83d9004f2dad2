/* SPDX-License-Identifier: MIT */
/*
 * allocator/span.c - the metadata arena: bump allocation of zeroed,
 * never-freed memory from OS reservations, and a free list of span
 * objects on top of it.  Span metadata never comes from malloc.
 */
#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "span.h"
#include "stats.h"

#define META_CHUNK ((size_t)2 << 20)

/* one cache line per span (metadata is handed out 64-byte aligned) */
_Static_assert(sizeof(hs_span_t) <= 64, "hs_span_t grew past a cache line");

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static char *meta_cur, *meta_end;
static hs_span_t *span_free;

static void *meta_alloc_locked(size_t size)
{
	size = (size + 63) & ~(size_t)63;
	if ((size_t)(meta_end - meta_cur) < size) {
		size_t chunk = size > META_CHUNK ? (size + 4095) & ~(size_t)4095
						 : META_CHUNK;
		char *m = hs_os_reserve(chunk, 4096);
		if (!m)
			return NULL;
		hs_stat_add(HS_STAT_meta_bytes, (int64_t)chunk);
		meta_cur = m;
		meta_end = m + chunk;
	}
	void *p = meta_cur;
	meta_cur += size;
	return p;
}

void *hs_meta_alloc(size_t size)
{
	pthread_mutex_lock(&meta_lock);
	void *p = meta_alloc_locked(size);
	pthread_mutex_unlock(&meta_lock);
	return p;
}

hs_span_t *hs_span_new(void)
{
	pthread_mutex_lock(&meta_lock);
	hs_span_t *s = span_free;
	if (s)
		span_free = s->next;
	else
		s = meta_alloc_locked(sizeof(*s));
	pthread_mutex_unlock(&meta_lock);
	if (s)
		memset(s, 0, sizeof(*s));
	return s;
}

void hs_span_delete(hs_span_t *s)
{
	/* Stale pagemap entries may still point here: keep the object
	 * readable (it is never unmapped) and mark it not in use. */
	s->location = 0;
	s->size_class = 0;
	pthread_mutex_lock(&meta_lock);
	s->next = span_free;
	span_free = s;
	pthread_mutex_unlock(&meta_lock);
}

void hs_meta_lock(void)
{
	pthread_mutex_lock(&meta_lock);
}

void hs_meta_unlock(void)
{
	pthread_mutex_unlock(&meta_lock);
}

void hs_meta_reinit(void)
{
	pthread_mutex_init(&meta_lock, NULL);
}
