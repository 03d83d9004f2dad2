/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/span.c - the metadata arena: bump allocation of zeroed,
 * never-freed memory from OS reservations, and the span objects, which
 * come from chunks of their own so that malloc_trim can give their
 * pages back.  Span metadata never comes from malloc.
 *
 * Span chunks are 2 MiB, 2 MiB aligned; a header at the start counts the
 * span objects handed out from each 4 KiB page of the chunk.  A page
 * whose objects are all on the free list holds no live span: trim takes
 * its objects off the list and MADV_DONTNEEDs it.  Such a page reads
 * back as zero (location 0 = not in use), which is what a stale pagemap
 * entry pointing into it must see.  Released pages are reused, one page
 * at a time, before the bump pointer moves on.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "base/os.h"
#include "base/stats.h"
#include "core/span.h"

#define META_CHUNK ((size_t)2 << 20)
#define META_PAGE ((size_t)4096)
#define SPAN_CHUNK ((size_t)2 << 20)
#define SPAN_PAGES (SPAN_CHUNK / META_PAGE) /* 512 */
#define SPANS_PER_PAGE (META_PAGE / sizeof(hs_span_t))

/* one cache line per span (metadata is handed out 64-byte aligned) */
_Static_assert(sizeof(hs_span_t) == 64, "hs_span_t is not a cache line");

typedef struct span_chunk {
	struct span_chunk *next;
	uint32_t nreleased;		    /* pages given back */
	uint8_t live[SPAN_PAGES];	    /* objects out, per 4 KiB page */
	uint64_t released[SPAN_PAGES / 64]; /* page given back by trim */
} span_chunk_t;

/* objects start after the header, which keeps page 0 resident */
#define SPAN_FIRST ((sizeof(span_chunk_t) + 63) & ~(size_t)63)

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static char *meta_cur, *meta_end;
/* span objects: free list, chunk list, bump region of the newest chunk */
static hs_span_t *span_free;
static span_chunk_t *span_chunks;
static char *span_cur, *span_end;
static size_t span_released; /* pages given back, all chunks */

static void *meta_alloc_locked(size_t size)
{
	size = (size + 63) & ~(size_t)63;
	/* a page or more starts on a page, so trim can drop its pages */
	size_t align = size >= META_PAGE ? META_PAGE : 64;
	char *p = (char *)(((uintptr_t)meta_cur + align - 1) & ~(align - 1));
	if (!meta_cur || p > meta_end || (size_t)(meta_end - p) < size) {
		size_t chunk = size > META_CHUNK ? (size + 4095) & ~(size_t)4095
						 : META_CHUNK;
		char *m = hs_os_alloc(chunk, META_PAGE);
		if (!m)
			return NULL;
		hs_stat_add(HS_STAT_meta_bytes, (int64_t)chunk);
		meta_end = m + chunk;
		meta_cur = p = m;
	}
	/* bytes handed out, alignment padding included: the touched part
	 * of the reservations (HEAPSCOPE_STAT_META_USED_BYTES) */
	hs_stat_add(HS_STAT_meta_used_bytes, (int64_t)(p + size - meta_cur));
	meta_cur = p + size;
	return p;
}

void *hs_meta_alloc_locked(size_t size)
{
	return meta_alloc_locked(size);
}

void *hs_meta_alloc(size_t size)
{
	pthread_mutex_lock(&meta_lock);
	void *p = meta_alloc_locked(size);
	pthread_mutex_unlock(&meta_lock);
	return p;
}

static span_chunk_t *chunk_of(const hs_span_t *s)
{
	return (span_chunk_t *)((uintptr_t)s & ~(uintptr_t)(SPAN_CHUNK - 1));
}

static size_t page_of(const hs_span_t *s)
{
	return ((uintptr_t)s & (SPAN_CHUNK - 1)) / META_PAGE;
}

/* A span object from a page trim gave back (its other objects go on the
 * free list), else from the bump region.  NULL on ENOMEM. */
static hs_span_t *span_carve_locked(void)
{
	if (span_released) {
		for (span_chunk_t *c = span_chunks; c; c = c->next) {
			if (!c->nreleased)
				continue;
			size_t w = 0;
			while (!c->released[w])
				w++;
			size_t pg = w * 64 +
				    (size_t)__builtin_ctzll(c->released[w]);
			c->released[w] &= c->released[w] - 1;
			c->nreleased--;
			span_released--;
			hs_span_t *first =
				(hs_span_t *)((char *)c + pg * META_PAGE);
			for (size_t i = SPANS_PER_PAGE - 1; i > 0; i--) {
				first[i].next = span_free;
				span_free = &first[i];
			}
			return first;
		}
	}
	if (span_cur == span_end) {
		span_chunk_t *c = hs_os_alloc(SPAN_CHUNK, SPAN_CHUNK);
		if (!c)
			return NULL;
		/* 4 KiB pages: trim gives them back one by one */
		hs_os_nohugepage(c, SPAN_CHUNK);
		hs_stat_add(HS_STAT_meta_bytes, (int64_t)SPAN_CHUNK);
		hs_stat_add(HS_STAT_meta_used_bytes, (int64_t)SPAN_FIRST);
		c->next = span_chunks;
		span_chunks = c;
		span_cur = (char *)c + SPAN_FIRST;
		span_end = (char *)c + SPAN_CHUNK;
	}
	hs_span_t *s = (hs_span_t *)span_cur;
	span_cur += sizeof(*s);
	hs_stat_add(HS_STAT_meta_used_bytes, (int64_t)sizeof(*s));
	return s;
}

hs_span_t *hs_span_new(void)
{
	pthread_mutex_lock(&meta_lock);
	hs_span_t *s = span_free;
	if (s)
		span_free = s->next;
	else
		s = span_carve_locked();
	if (s)
		chunk_of(s)->live[page_of(s)]++;
	pthread_mutex_unlock(&meta_lock);
	if (s)
		memset(s, 0, sizeof(*s));
	return s;
}

void hs_span_delete(hs_span_t *s)
{
	/* Stale pagemap entries may still point here: keep the object
	 * readable (its page is never unmapped; trim may zero it) and
	 * mark it not in use. */
	s->location = 0;
	s->size_class = 0;
	pthread_mutex_lock(&meta_lock);
	chunk_of(s)->live[page_of(s)]--;
	s->next = span_free;
	span_free = s;
	pthread_mutex_unlock(&meta_lock);
}

/* Half a stash per trip to the metadata lock, either way. */
#define STASH_TRIP (HS_SPAN_STASH / 2)

hs_span_t *hs_span_stash_new(hs_span_stash_t *st)
{
	if (!st->n) {
		pthread_mutex_lock(&meta_lock);
		while (st->n < STASH_TRIP) {
			hs_span_t *s = span_free;
			if (s)
				span_free = s->next;
			else if (!(s = span_carve_locked()))
				break;
			chunk_of(s)->live[page_of(s)]++;
			st->obj[st->n++] = s;
		}
		pthread_mutex_unlock(&meta_lock);
		if (!st->n)
			return NULL;
	}
	hs_span_t *s = st->obj[--st->n];
	memset(s, 0, sizeof(*s));
	return s;
}

/* Objects of st above `keep` back to the free list, one lock. */
static void stash_drop(hs_span_stash_t *st, uint32_t keep)
{
	pthread_mutex_lock(&meta_lock);
	while (st->n > keep) {
		hs_span_t *s = st->obj[--st->n];
		chunk_of(s)->live[page_of(s)]--;
		s->next = span_free;
		span_free = s;
	}
	pthread_mutex_unlock(&meta_lock);
}

void hs_span_stash_delete(hs_span_stash_t *st, hs_span_t *s)
{
	if (st->n == HS_SPAN_STASH)
		stash_drop(st, HS_SPAN_STASH - STASH_TRIP);
	/* as hs_span_delete: stale pagemap entries may name it */
	s->location = 0;
	s->size_class = 0;
	st->obj[st->n++] = s;
}

void hs_span_stash_flush(hs_span_stash_t *st)
{
	if (st->n)
		stash_drop(st, 0);
}

/* Page pg of chunk c holds no live span, is fully carved and may go. */
static bool page_idle_locked(const span_chunk_t *c, size_t pg)
{
	const char *end = (const char *)c + (pg + 1) * META_PAGE;
	if (pg == 0 || c->live[pg] || (c->released[pg / 64] >> (pg % 64) & 1))
		return false;
	/* the newest chunk: only pages wholly below the bump pointer */
	return c != chunk_of((const hs_span_t *)(span_cur - 1)) ||
	       end <= span_cur;
}

size_t hs_span_trim(void)
{
	size_t done = 0;
	pthread_mutex_lock(&meta_lock);
	if (!span_chunks) {
		pthread_mutex_unlock(&meta_lock);
		return 0;
	}
	/* the free list without the objects of idle pages */
	hs_span_t **link = &span_free;
	while (*link) {
		hs_span_t *s = *link;
		if (page_idle_locked(chunk_of(s), page_of(s)))
			*link = s->next;
		else
			link = &s->next;
	}
	for (span_chunk_t *c = span_chunks; c; c = c->next) {
		for (size_t pg = 1; pg < SPAN_PAGES;) {
			size_t n = 0;
			while (pg + n < SPAN_PAGES &&
			       page_idle_locked(c, pg + n))
				n++;
			if (!n) {
				pg++;
				continue;
			}
			hs_os_decommit((char *)c + pg * META_PAGE,
				       n * META_PAGE);
			for (size_t i = pg; i < pg + n; i++)
				c->released[i / 64] |= (uint64_t)1 << (i % 64);
			c->nreleased += (uint32_t)n;
			span_released += n;
			done += n * META_PAGE;
			pg += n;
		}
	}
	pthread_mutex_unlock(&meta_lock);
	return done;
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
