/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/central_freelist.c - per-class, per-shard lists of spans with
 * free objects, each with a small transfer cache of whole batches in
 * front.  A span hands out objects from its own free list first, then
 * carves never-used objects from its end (so fresh spans are not touched
 * all at once).  When the last object of a span comes back, the span goes
 * back to the page heap.  Shards: see central_freelist.h.
 *
 * Transfer cache: a full batch given back whose first and last objects
 * belong to spans of one shard is kept as it is (head and tail) in that
 * shard's cache, and the next refill of that shard takes it whole (a
 * streak's refill several, linked): O(1) a batch under the lock instead
 * of a pagemap lookup, a span update and an object read per object.
 * That was most of producer_consumer's time (every object crosses
 * threads): the class lock was held for a batch of cache misses while
 * the other thread slept on it.  At most TC_BYTES (and
 * TC_SLOTS batches) per class and shard, slots from the metadata arena on
 * first use; malloc_trim drains them (hs_central_drain).  256 KiB, not
 * the 64 KiB of before: with four threads on two cores a consumer runs
 * through whole queues while its producer waits, the cache overflowed,
 * and the producer's refills went back to carving span free lists one
 * object at a time (producer_consumer at 2 pairs: CPU time -19%, median
 * of 5).
 */

#include "base/assert.h"
#include "base/os.h"
#include "base/stats.h"
#include "core/central_freelist.h"
#include "core/core.h"
#include "core/page_heap.h"
#include "core/pagemap.h"
#include "core/span.h"
#include "core/spinlock.h"

#define TC_SLOTS 128
#define TC_BYTES ((size_t)256 << 10)
#define TC_MAX_SIZE 1024 /* larger objects: the per-object cost is small */

typedef struct central {
	hs_spinlock_t lock;  /* core/spinlock.h: held for a swap or a batch */
	hs_span_t *nonempty; /* spans with free or uncarved objects */
	uint32_t tc_n;	     /* batches in the transfer cache */
	uint32_t tc_max;     /* its capacity, once tc is allocated */
	void **tc;	     /* [2 * tc_max]: head, tail of each batch */
	uint32_t nempty;     /* spans on nonempty with no object out */
} __attribute__((aligned(64))) central_t;

_Static_assert(sizeof(central_t) == 64, "central_t: one cache line");

#define NSH HS_CENTRAL_MAX_SHARDS
_Static_assert(NSH - 1 <= HS_PM_SHARD_MASK, "a shard fits in an entry");

/* Spans with no object out a (shard, class) keeps on its list instead of
 * giving them back to the page heap, which would hand them to any shard:
 * the next refill of a thread of that shard carves them again, on cache
 * lines its own threads wrote (rptestN: a 4-16 KiB class's spans hold 1-7
 * objects and empty all the time).  Up to KEEP_EMPTY spans, and more
 * only while they are at most KEEP_EMPTY_BYTES; a span over
 * KEEP_EMPTY_BYTES never (the classes over 4 KiB a thread takes once go
 * back to the page heap whole, thread_cache.c ONCE_BYTES: gcc held
 * 1.7 MiB of such blocks at its peak), nor one of a class over
 * KEEP_EMPTY_MAX_SIZE; malloc_trim gives them back
 * (hs_central_drain), and so does the exit of the shard's last live
 * thread (hs_central_shard_vacated). */
#ifndef KEEP_EMPTY
#define KEEP_EMPTY 1u
#endif
#ifndef KEEP_EMPTY_BYTES
#define KEEP_EMPTY_BYTES ((size_t)64 << 10)
#endif
/* A class over 16 KiB has 1-3 objects to a span of 20-64 KiB: a kept span
 * is one block's pages that no other class can use.  groff's troff and
 * grotty ask for blocks of 20-80 KiB a few times each; kept, their
 * classes' empty spans held 0.1-0.2 MiB at the peak (troff -v: 49152 and
 * 65536-byte classes, 112 KiB).  Measured (bench/README.md, "Empty spans
 * of classes over 16 KiB"): groff's peak RSS 6.63 -> 6.41 MiB (median
 * of 5); git's (its repack's two threads free blocks over 16 KiB all
 * the time) and every other real program's within 0.3 MiB. */
#define KEEP_EMPTY_MAX_SIZE 16384

/* Shard-major: the classes of one shard are contiguous, so the shards a
 * process never uses are never touched. */
static central_t centrals[NSH][HS_NUM_CLASSES] = {
	[0 ... NSH - 1] = {[0 ... HS_NUM_CLASSES - 1] = {
				   .lock = HS_SPINLOCK_INIT}},
};

/* (shard, class) pairs that have transfer-cache slots: bits only set,
 * under the class lock and the metadata lock (tc_init).  malloc_trim
 * visits only these: locking every class of every shard wrote 24 KiB of
 * `centrals` a small program never touches otherwise. */
#define TC_WORDS ((HS_NUM_CLASSES + 63) / 64)
static uint64_t tc_used[NSH][TC_WORDS];

/* (shard, class) pairs that have kept an empty span (set under the
 * class lock, cleared by hs_central_drain): malloc_trim visits these. */
static uint64_t empty_used[NSH][TC_WORDS];

/* Bit cls of a TC_WORDS-word class set. */
static bool has_class(const uint64_t *words, unsigned cls)
{
	return words[cls / 64] >> (cls % 64) & 1;
}

static bool tc_is_used(unsigned sh, unsigned cls)
{
	return __atomic_load_n(&tc_used[sh][cls / 64], __ATOMIC_ACQUIRE) >>
		       (cls % 64) &
	       1;
}

/* Transfer cache capacity of class cls in batches. */
static uint32_t tc_capacity(unsigned cls)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	if (ci->size > TC_MAX_SIZE)
		return 0;
	size_t batch_bytes = (size_t)ci->batch * ci->size;
	size_t n = TC_BYTES / batch_bytes;
	return (uint32_t)(n > TC_SLOTS ? TC_SLOTS : n);
}

/* Allocates c's transfer cache slots (metadata, under c's lock: lock
 * order central -> metadata) and marks (sh, cls) in tc_used under the
 * metadata lock too (see give_back_slots).  Capacity 0 when the class's
 * batches are too big or memory is short; then tc stays NULL and this
 * runs again. */
static void tc_init(central_t *c, unsigned sh, unsigned cls)
{
	uint32_t cap = tc_capacity(cls);
	if (cap == 0)
		return;
	hs_meta_lock();
	void **slots = hs_meta_alloc_locked(2 * cap * sizeof(void *));
	if (slots)
		__atomic_fetch_or(&tc_used[sh][cls / 64],
				  (uint64_t)1 << (cls % 64), __ATOMIC_RELEASE);
	hs_meta_unlock();
	if (!slots)
		return;
	c->tc_max = cap;
	c->tc = slots;
}

/* A span kept with no object out (KEEP_EMPTY): its objects all back on
 * its free list; a fresh span has none there. */
static bool is_kept_empty(const hs_span_t *s)
{
	return s->allocated == 0 && s->freelist;
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

/* Up to n new spans (NEW_MAX at most) for class cls and shard `shard`
 * into out[], not yet on a list, under one acquisition of the page heap
 * lock.  Called without the class lock (the page heap's may wait for an
 * mmap): other threads' frees to this class go on meanwhile.  Returns
 * how many (0 on ENOMEM). */
#define NEW_MAX 16
static size_t new_spans(unsigned cls, unsigned shard, hs_span_t **out,
			size_t n)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	if (n > NEW_MAX)
		n = NEW_MAX;
	/* the pagemap entries carry the class from here on, for free's
	 * fast path; no object of these spans has escaped yet */
	n = hs_page_heap_alloc_small_n(ci->pages, cls, shard, out, n);
	for (size_t i = 0; i < n; i++) {
		hs_span_t *s = out[i];
		s->freelist = s->free_tail = NULL;
		s->carve_left = ci->objects;
		s->allocated = 0;
		/* publish the class before any object of the span escapes */
		__atomic_store_n(&s->size_class, (uint8_t)cls,
				 __ATOMIC_RELEASE);
	}
	if (n) {
		int64_t k = (int64_t)n, bytes = (int64_t)ci->pages
						<< HS_PAGE_SHIFT;
		int64_t used = (int64_t)ci->objects * ci->size;
		hs_stat_add(HS_STAT_small_span_bytes, k * bytes);
		hs_stat_add(HS_STAT_central_free_bytes, k * used);
		hs_stat_add(HS_STAT_span_waste_bytes, k * (bytes - used));
	}
	return n;
}

/* Objects on span s's free list (class ci): those carved and not out. */
static uint32_t listed(const hs_span_t *s, const hs_class_info_t *ci)
{
	return ci->objects - s->carve_left - s->allocated;
}

/* Carving writes a link into each object it hands out.  Of a span the
 * page heap handed out untouched (s->zeroed: fresh from the OS or
 * released) those pages are not resident, and each would fault on its
 * own under the class lock: ~11 us a fault on this project's VMs, where
 * MADV_POPULATE_WRITE costs 2.4 us a page one page a call, 0.8-0.9 us
 * in calls of 8-16 (bench/fault_cost).  So the carve's pages are
 * faulted in first: one call for all the pages of the m objects when
 * they are at most POPULATE_WHOLE bytes (the program writes the objects
 * it asked for; whole objects, as carving writes only the first word of
 * one over 4 KiB, and gawk's 11200-byte blocks then faulted page by page
 * in gawk's own code), else one call per object for its first page, the
 * one carving writes.  Measured (bench/README.md, "Carving populated"):
 * system time xmllint 0.31 -> 0.08 s, xsltproc 0.57 -> 0.19, gawk 0.32
 * -> 0.10; peak RSS unchanged.  first's page is left out unless first
 * starts it: the previous carve wrote it, so a carve within one page (32
 * objects of 64 bytes) makes no call that would find nothing to do. */
#define POPULATE_WHOLE 16384
static void populate_carve(char *first, size_t size, uint32_t m)
{
	const uintptr_t pg = HS_OS_PAGE - 1;
	if (size <= POPULATE_WHOLE) {
		/* from first's page if first starts it, else the next */
		uintptr_t lo = ((uintptr_t)first + pg) & ~pg;
		uintptr_t hi = ((uintptr_t)first + (size_t)m * size + pg) & ~pg;
		if (hi > lo)
			hs_os_populate_write((void *)lo, hi - lo);
		return;
	}
	/* objects over POPULATE_WHOLE: no two first pages are adjacent */
	for (uint32_t i = 0; i < m; i++)
		hs_os_populate_write(
			(void *)(((uintptr_t)first + (size_t)i * size) & ~pg),
			HS_OS_PAGE);
}

/* Moves up to `want` objects of span s (class ci) onto the front of
 * *chain (*last: the chain's tail, set if the chain was empty), from its
 * free list first, then carved in address order; one update of the
 * span's counters per call, not per object.  A free list of at most
 * `want` objects goes whole, with no walk: its length is known (listed)
 * and its tail is kept.  The walk
 * was most of a refill's time where frees come from other threads (the
 * objects' cache lines are on the other core: mstressN, rptestN), one
 * dependent miss after another under the class lock; taken whole, each
 * miss comes when malloc pops its object, with the program's work to
 * overlap.  Returns how many.  Caller holds the class lock. */
static int take_objects(hs_span_t *s, const hs_class_info_t *ci, int want,
			void **chain, void **last)
{
	const size_t size = ci->size;
	int got = 0;
	if (s->freelist) {
		void *first = s->freelist, *end;
		uint32_t k = listed(s, ci);
		if (k <= (uint32_t)want) {
			end = s->free_tail;
			got = (int)k;
			s->freelist = NULL;
		} else {
			/* the first objects of the free list, linked */
			end = first;
			got = 1;
			while (got < want) {
				end = *(void **)end;
				got++;
			}
			s->freelist = *(void **)end;
		}
		*(void **)end = *chain;
		if (!*last)
			*last = end;
		*chain = first;
	}
	uint32_t m = (uint32_t)(want - got);
	if (m > s->carve_left)
		m = s->carve_left;
	if (m) {
		char *first = (char *)hs_span_addr(s) +
			      (size_t)(ci->objects - s->carve_left) * size;
		char *end = first + (size_t)(m - 1) * size;
		char *o = first;
		if (s->zeroed)
			populate_carve(first, size, m);
		/* four links per trip: ~3 instructions an object, not 5 */
		for (; o + 4 * size <= end; o += 4 * size) {
			char *b = o + size, *c = b + size, *d = c + size;
			*(void **)o = b;
			*(void **)b = c;
			*(void **)c = d;
			*(void **)d = d + size;
		}
		for (; o < end; o += size)
			*(void **)o = o + size;
		*(void **)end = *chain;
		if (!*last)
			*last = end;
		*chain = first;
		s->carve_left -= m;
		got += (int)m;
	}
	s->allocated += (uint32_t)got;
	return got;
}

static void drain_class(unsigned sh, unsigned cls);

/*
 * Adoption: shard `shard` found no span of class cls with free objects.
 * Before it takes new spans from the page heap it takes partial spans
 * (up to ADOPT_MAX, until they hold `want` free objects) from shards
 * with no refill for 10 ms (hs_central_shards_idle),
 * their transfer-cache batches given back to the spans first.  Without
 * it, a shard's free objects wait for a thread of that shard: larson's
 * workers free into the spans of the main thread, which sleeps, and of
 * shards whose threads exited, and carved new spans meanwhile
 * (larsonN-sized: 651 spans adopted, 418 from main's shard; peak RSS
 * 25.0 -> 20.3 MiB; bench/README.md, "Shard adoption figures").  Kept
 * empty spans stay (hs_central_shard_vacated gives those back).  A span
 * changes shard under both class locks, lower shard first (the order
 * of give_back_slots and fork's); its pagemap entries get the new shard
 * bits, so frees of its objects go to its new shard (a free that read
 * the old bits finds the span's shard changed under the lock and takes
 * the new one: hs_central_insert_chain).  Called without c's lock.
 * True if a span moved.
 */
#define ADOPT_MAX 16
static bool adopt(unsigned cls, unsigned shard, int want)
{
	uint32_t idle = hs_central_shards_idle() & ~(1u << shard);
	central_t *c = &centrals[shard][cls];
	const hs_class_info_t *ci = &hs_classes[cls];
	int64_t need = want;
	bool moved = false;
	while (idle && need > 0) {
		unsigned sh = (unsigned)__builtin_ctz(idle);
		idle &= idle - 1;
		central_t *o = &centrals[sh][cls];
		/* racy peeks: nothing to take costs no lock */
		if (__atomic_load_n(&o->tc_n, __ATOMIC_RELAXED))
			drain_class(sh, cls);
		if (!__atomic_load_n(&o->nonempty, __ATOMIC_RELAXED))
			continue;
		central_t *first = sh < shard ? o : c;
		hs_spin_lock(&first->lock);
		hs_spin_lock(&(first == o ? c : o)->lock);
		hs_span_t *s = o->nonempty, *next;
		for (unsigned k = 0; s && k < ADOPT_MAX && need > 0; s = next) {
			next = s->next;
			if (is_kept_empty(s))
				continue;
			unlink_span(o, s);
			s->shard = (uint8_t)shard;
			hs_pagemap_set_class(s, cls);
			link_span(c, s);
			need -= (int64_t)(ci->objects - s->allocated);
			k++;
			moved = true;
		}
		hs_spin_unlock(&(first == o ? c : o)->lock);
		hs_spin_unlock(&first->lock);
	}
	return moved;
}

HS_HOT int hs_central_remove_range(unsigned cls, unsigned shard, void **head,
				   void **tail, int n)
{
	if (shard >= NSH)
		shard = 0;
	central_t *c = &centrals[shard][cls];
	const hs_class_info_t *ci = &hs_classes[cls];
	void *chain = NULL, *last = NULL;
	int got = 0;
	bool adopted = false;
	hs_central_shard_refilled(shard);
	hs_spin_lock(&c->lock);
	/* whole batches, one link each; a short request (a thread's first
	 * refill of the class) takes one rather than carve a new span */
	const int batch = ci->batch;
	while (c->tc_n && (got + batch <= n || (!got && !c->nonempty))) {
		c->tc_n--;
		*(got ? (void **)last : &chain) = c->tc[2 * c->tc_n];
		last = c->tc[2 * c->tc_n + 1];
		got += batch;
	}
	n = got ? got : n;
	while (got < n) {
		hs_span_t *s = c->nonempty;
		if (!s) {
			/* once a call: partial spans of idle shards first */
			hs_spin_unlock(&c->lock);
			if (!adopted) {
				adopted = true;
				if (adopt(cls, shard, n - got)) {
					hs_spin_lock(&c->lock);
					continue;
				}
			}
			/* as many spans as the rest of the request needs, so
			 * each is carved from below (none on the list with
			 * nothing out) */
			hs_span_t *fresh[NEW_MAX];
			const uint32_t per = ci->objects;
			size_t k = ((size_t)(n - got) + per - 1) / per;
			k = new_spans(cls, shard, fresh, k);
			hs_spin_lock(&c->lock);
			if (!k)
				break;
			while (k)
				link_span(c, fresh[--k]);
			s = c->nonempty;
		}
		if (is_kept_empty(s))
			c->nempty--; /* in use again */
		got += take_objects(s, ci, n - got, &chain, &last);
		if (!s->freelist && !s->carve_left)
			unlink_span(c, s);
	}
	hs_spin_unlock(&c->lock);
	hs_stat_add(HS_STAT_central_free_bytes, -(int64_t)(got * ci->size));
	*head = chain;
	*tail = last;
	return got;
}

/* Puts the run first..last (k objects of span s, already linked, last's
 * link unspecified) back on s; caller holds s's class lock c.  One span
 * update per run; *kept counts the objects back on spans still in use.
 * A span with no object left out goes on *empty, for the page heap once
 * the lock is released, unless it is kept (KEEP_EMPTY). */
static void give_run(central_t *c, const hs_class_info_t *ci, hs_span_t *s,
		     void *first, void *last, uint32_t k, hs_span_t **empty,
		     int64_t *free_delta, int64_t *span_delta, int64_t *kept)
{
	if (!s->freelist)
		s->free_tail = last;
	*(void **)last = s->freelist;
	s->freelist = first;
	s->allocated -= k;
	if (s->allocated == 0 && hs_span_bytes(s) <= KEEP_EMPTY_BYTES &&
	    ci->size <= KEEP_EMPTY_MAX_SIZE &&
	    (c->nempty < KEEP_EMPTY ||
	     (size_t)(c->nempty + 1) * hs_span_bytes(s) <= KEEP_EMPTY_BYTES)) {
		/* kept on its shard, every object free (its stats stay
		 * those of a span in use with free objects) */
		c->nempty++;
		*kept += k;
		if (!s->in_list)
			link_span(c, s);
		unsigned cls = s->size_class;
		uint64_t *w = &empty_used[s->shard][cls / 64];
		if (!(__atomic_load_n(w, __ATOMIC_RELAXED) >> (cls % 64) & 1))
			__atomic_fetch_or(w, (uint64_t)1 << (cls % 64),
					  __ATOMIC_RELAXED);
	} else if (s->allocated == 0) {
		if (s->in_list)
			unlink_span(c, s);
		*span_delta -= (int64_t)hs_span_bytes(s);
		*free_delta -= (int64_t)(ci->objects - k) * ci->size;
		/* no object of s is out: free's fast path no longer
		 * needs the class, and the page heap must not see it */
		hs_pagemap_set_class(s, 0);
		__atomic_store_n(&s->size_class, 0, __ATOMIC_RELAXED);
		s->next = *empty;
		*empty = s;
	} else {
		*kept += k; /* turned into bytes once per chain */
		if (!s->in_list)
			link_span(c, s);
	}
}

/* Each object under its span's shard lock: the first object's shard's
 * in one pass under that lock, the others set aside for the next pass
 * (k shards: k lock acquisitions, not one per change of shard along the
 * chain).  The chain is cut into runs of consecutive objects of one span
 * (a tree freed in the order it was built gives long ones), each spliced
 * whole onto its span: one pagemap lookup and one span update per run
 * (xmllint: bench/README.md, "Allocator core figures"). */
HS_HOT void hs_central_insert_chain(unsigned cls, void *head, int n)
{
	hs_assert(n > 0 && cls > 0 && cls < HS_NUM_CLASSES);
	const hs_class_info_t *ci = &hs_classes[cls];
	int64_t free_delta = 0, span_delta = 0, waste_delta = 0, kept = 0;
	hs_span_t *empty = NULL; /* to the page heap once no lock is held */
	while (n > 0) {
		central_t *c = NULL; /* the shard lock held, of shard csh */
		unsigned csh = 0;
		void *rest = NULL, *obj = head;
		int nrest = 0, i = 0;
		while (i < n) {
			/* a span's start and length are fixed while it has
			 * objects out; its shard changes only under its old
			 * and new shards' locks (adopt), so it is read again
			 * below under the lock taken */
			hs_span_t *s = hs_pagemap_lookup(obj);
			const uintptr_t lo = (uintptr_t)hs_span_addr(s);
			const uintptr_t len = hs_span_bytes(s);
			void *first = obj, *last = obj;
			/* the tail's link is unspecified: read only below n.
			 * Per object: a load and a compare of its offset in
			 * the span; a count per two (11 -> ~6 instructions
			 * an object) */
			int left = n - i - 1;
			while (left > 1) {
				void *a = *(void **)last;
				if ((uintptr_t)a - lo >= len)
					break;
				void *b = *(void **)a;
				if ((uintptr_t)b - lo >= len) {
					last = a;
					left--;
					break;
				}
				last = b;
				left -= 2;
			}
			if (left == 1 && (uintptr_t)*(void **)last - lo < len) {
				last = *(void **)last;
				left = 0;
			}
			uint32_t k = (uint32_t)(n - i - left);
			i = n - left;
			if (left)
				obj = *(void **)last;
			if (!c) {
				csh = s->shard;
				c = &centrals[csh][cls];
				hs_spin_lock(&c->lock);
			}
			if (s->shard != csh) {
				*(void **)last = rest;
				rest = first;
				nrest += (int)k;
				continue;
			}
			give_run(c, ci, s, first, last, k, &empty, &free_delta,
				 &span_delta, &kept);
		}
		hs_spin_unlock(&c->lock);
		head = rest;
		n = nrest;
	}
	free_delta += kept * ci->size;
	for (hs_span_t *s = empty; s; s = s->next)
		waste_delta -= (int64_t)(hs_span_bytes(s) -
					 (uint64_t)ci->objects * ci->size);
	/* one page heap lock for all of them (rptestN: a batch of a 4-16
	 * KiB class empties several 1-7 object spans) */
	if (empty)
		hs_page_heap_free_small_list(empty);
	/* once per batch: the statistics' cache line is shared by all */
	if (span_delta)
		hs_stat_add(HS_STAT_small_span_bytes, span_delta);
	if (waste_delta)
		hs_stat_add(HS_STAT_span_waste_bytes, waste_delta);
	if (free_delta)
		hs_stat_add(HS_STAT_central_free_bytes, free_delta);
}

HS_HOT void hs_central_insert_range(unsigned cls, void *head, void *tail, int n)
{
	hs_assert(n > 0 && cls > 0 && cls < HS_NUM_CLASSES);
	if (n == hs_classes[cls].batch) {
		unsigned sh = hs_pagemap_lookup(head)->shard;
		if (hs_pagemap_lookup(tail)->shard == sh) {
			central_t *c = &centrals[sh][cls];
			hs_spin_lock(&c->lock);
			if (HS_UNLIKELY(!c->tc))
				tc_init(c, sh, cls);
			if (c->tc_n < c->tc_max) {
				c->tc[2 * c->tc_n] = head;
				c->tc[2 * c->tc_n + 1] = tail;
				c->tc_n++;
				hs_spin_unlock(&c->lock);
				hs_stat_add(HS_STAT_central_free_bytes,
					    (int64_t)n * hs_classes[cls].size);
				return;
			}
			hs_spin_unlock(&c->lock);
		}
	}
	hs_central_insert_chain(cls, head, n);
}

HS_HOT bool hs_central_tc_full(unsigned cls, const void *obj)
{
	const central_t *c = &centrals[hs_pagemap_lookup(obj)->shard][cls];
	if (!__atomic_load_n(&c->tc, __ATOMIC_RELAXED))
		return tc_capacity(cls) == 0; /* slots come with a batch */
	return __atomic_load_n(&c->tc_n, __ATOMIC_RELAXED) >=
	       __atomic_load_n(&c->tc_max, __ATOMIC_RELAXED);
}

/* After a drain: gives back the pages of the transfer caches' slot
 * arrays (up to 2 KiB per class and shard, ~40 KiB for a thread that used
 * every small class), which read back as zero and fault in again on the
 * next batch kept.  Every class with slots is locked (ascending, as
 * fork's prepare does; adopt's two locks come in the same order), then the
 * metadata lock; if tc_used is still what was locked, every slot array
 * is behind a lock held here, and no page of theirs holds other
 * metadata (hs_meta_alloc).  Nothing is given back if a cache holds a
 * batch again (another thread's free since the drain). */
static void give_back_slots(unsigned ns)
{
	uint64_t want[NSH][TC_WORDS];
	bool empty = true;
	for (unsigned sh = 0; sh < ns; sh++)
		for (unsigned w = 0; w < TC_WORDS; w++)
			want[sh][w] = __atomic_load_n(&tc_used[sh][w],
						      __ATOMIC_ACQUIRE);
	for (unsigned sh = 0; sh < ns; sh++)
		for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++)
			if (has_class(want[sh], cls))
				hs_spin_lock(&centrals[sh][cls].lock);
	hs_meta_lock();
	for (unsigned sh = 0; sh < ns; sh++)
		for (unsigned w = 0; w < TC_WORDS; w++)
			if (tc_used[sh][w] != want[sh][w])
				empty = false;
	for (unsigned sh = 0; sh < ns && empty; sh++)
		for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++)
			if (has_class(want[sh], cls) && centrals[sh][cls].tc_n)
				empty = false;
	for (unsigned sh = 0; sh < ns && empty; sh++) {
		for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++) {
			central_t *c = &centrals[sh][cls];
			if (!has_class(want[sh], cls) || !c->tc)
				continue;
			uintptr_t lo = (uintptr_t)c->tc & ~(uintptr_t)4095;
			uintptr_t hi =
				((uintptr_t)(c->tc + 2 * c->tc_max) + 4095) &
				~(uintptr_t)4095;
			hs_os_decommit((void *)lo, hi - lo);
		}
	}
	hs_meta_unlock();
	for (unsigned sh = ns; sh-- > 0;)
		for (unsigned cls = HS_NUM_CLASSES; cls-- > 1;)
			if (has_class(want[sh], cls))
				hs_spin_unlock(&centrals[sh][cls].lock);
}

/* The empty spans (shard sh, class cls) kept (KEEP_EMPTY) back to the
 * page heap. */
static void release_kept(unsigned sh, unsigned cls)
{
	const hs_class_info_t *ci = &hs_classes[cls];
	central_t *c = &centrals[sh][cls];
	hs_span_t *empty = NULL, *next;
	int64_t n = 0;
	hs_spin_lock(&c->lock);
	__atomic_fetch_and(&empty_used[sh][cls / 64],
			   ~((uint64_t)1 << (cls % 64)), __ATOMIC_RELAXED);
	for (hs_span_t *s = c->nonempty; s && c->nempty; s = next) {
		next = s->next;
		if (!is_kept_empty(s))
			continue;
		unlink_span(c, s);
		c->nempty--;
		hs_pagemap_set_class(s, 0);
		__atomic_store_n(&s->size_class, 0, __ATOMIC_RELAXED);
		s->next = empty;
		empty = s;
		n++;
	}
	hs_spin_unlock(&c->lock);
	if (!empty)
		return;
	int64_t bytes = (int64_t)ci->pages << HS_PAGE_SHIFT;
	int64_t used = (int64_t)ci->objects * ci->size;
	hs_page_heap_free_small_list(empty);
	hs_stat_add(HS_STAT_small_span_bytes, -n * bytes);
	hs_stat_add(HS_STAT_span_waste_bytes, -n * (bytes - used));
	hs_stat_add(HS_STAT_central_free_bytes, -n * used);
}

/* The transfer-cache batches of (shard sh, class cls) back to their
 * spans. */
static void drain_class(unsigned sh, unsigned cls)
{
	central_t *c = &centrals[sh][cls];
	int n = hs_classes[cls].batch;
	for (;;) {
		void *head = NULL;
		hs_spin_lock(&c->lock);
		if (c->tc_n) {
			c->tc_n--;
			head = c->tc[2 * c->tc_n];
		}
		hs_spin_unlock(&c->lock);
		if (!head)
			break;
		/* counted as central free already */
		hs_stat_add(HS_STAT_central_free_bytes,
			    -(int64_t)n * hs_classes[cls].size);
		hs_central_insert_chain(cls, head, n);
	}
}

/* Shard sh's transfer-cache batches back to their spans, then its kept
 * empty spans (which the batches may have added to) to the page heap. */
static void drain_shard(unsigned sh)
{
	for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++)
		if (tc_is_used(sh, cls))
			drain_class(sh, cls);
	for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++)
		if (has_class(empty_used[sh], cls))
			release_kept(sh, cls);
}

void hs_central_drain(void)
{
	unsigned ns = hs_central_nshards();
	for (unsigned sh = 0; sh < ns; sh++)
		drain_shard(sh);
	give_back_slots(ns);
}

void hs_central_shard_vacated(unsigned sh)
{
	if (sh < hs_central_nshards())
		drain_shard(sh);
}

bool hs_central_occupancy(const void *obj, struct hs_span_occupancy *o)
{
	const hs_span_t *s = hs_pagemap_lookup(obj);
	unsigned cls = s ? __atomic_load_n(&s->size_class, __ATOMIC_RELAXED) : 0;

	if (!s || !cls || cls >= HS_NUM_CLASSES)
		return false;
	o->start = (uint64_t)(uintptr_t)hs_span_addr(s);
	o->bytes = hs_span_bytes(s);
	o->live = __atomic_load_n(&s->allocated, __ATOMIC_RELAXED);
	o->objects = hs_classes[cls].objects;
	return true;
}

/* Span s's free list: listed() objects, all of s, the last free_tail. */
static bool list_is_valid(const hs_span_t *s, const hs_class_info_t *ci)
{
	uint32_t want = listed(s, ci), n = 0;
	const void *o = s->freelist, *last = NULL;
	for (; o && n <= want; o = *(void *const *)o, n++) {
		if (hs_pagemap_lookup(o) != s)
			return false;
		last = o;
	}
	return n == want && !o && (!n || last == s->free_tail);
}

int hs_central_is_valid(void)
{
	int ok = 1;
	for (unsigned sh = 0; sh < NSH; sh++) {
		for (unsigned cls = 1; cls < HS_NUM_CLASSES; cls++) {
			const hs_class_info_t *ci = &hs_classes[cls];
			central_t *c = &centrals[sh][cls];
			hs_spin_lock(&c->lock);
			uint32_t nempty = 0;
			for (hs_span_t *s = c->nonempty; s; s = s->next) {
				nempty += is_kept_empty(s);
				if (s->size_class != cls || !s->in_list ||
				    s->shard != sh ||
				    s->location != HS_SPAN_IN_USE ||
				    s->npages != ci->pages ||
				    hs_pagemap_get(s->start) != s ||
				    s->allocated > ci->objects ||
				    s->allocated + s->carve_left > ci->objects ||
				    (!s->freelist && !s->carve_left) ||
				    !list_is_valid(s, ci))
					ok = 0;
			}
			if (nempty != c->nempty)
				ok = 0;
			if (c->tc_n > c->tc_max || c->tc_max > TC_SLOTS ||
			    (c->tc_n && !c->tc))
				ok = 0;
			for (uint32_t b = 0; ok && b < c->tc_n; b++) {
				/* a batch: ci->batch objects of class cls */
				void *o = c->tc[2 * b];
				for (uint32_t k = 1; k < ci->batch; k++) {
					hs_span_t *s = hs_pagemap_lookup(o);
					if (!s || s->size_class != cls) {
						ok = 0;
						break;
					}
					o = *(void **)o;
				}
				if (o != c->tc[2 * b + 1])
					ok = 0;
			}
			hs_spin_unlock(&c->lock);
		}
	}
	return ok;
}

void *hs_central_tc_slots(unsigned shard, unsigned cls, size_t *bytes)
{
	*bytes = 0;
	if (shard >= NSH || cls >= HS_NUM_CLASSES || !tc_is_used(shard, cls))
		return NULL; /* without touching the lists' memory */
	central_t *c = &centrals[shard][cls];
	hs_spin_lock(&c->lock);
	void *p = c->tc;
	*bytes = p ? 2 * c->tc_max * sizeof(void *) : 0;
	hs_spin_unlock(&c->lock);
	return p;
}

const void *hs_central_shard_mem(unsigned shard, size_t *bytes)
{
	*bytes = sizeof(centrals[shard]);
	return centrals[shard];
}

/* fork: every shard that can be in use (nshards is fixed from here on),
 * classes ascending within a shard: the order of give_back_slots; adopt
 * holds two locks of one class, the lower shard's first, which is the
 * same order. */
void hs_central_lock_all(void)
{
	unsigned ns = hs_central_nshards();
	for (unsigned sh = 0; sh < ns; sh++)
		for (unsigned i = 0; i < HS_NUM_CLASSES; i++)
			hs_spin_lock(&centrals[sh][i].lock);
}

void hs_central_unlock_all(void)
{
	unsigned ns = hs_central_nshards();
	for (unsigned sh = ns; sh-- > 0;)
		for (unsigned i = HS_NUM_CLASSES; i-- > 0;)
			hs_spin_unlock(&centrals[sh][i].lock);
}

void hs_central_reinit(void)
{
	unsigned ns = hs_central_nshards();
	for (unsigned sh = 0; sh < ns; sh++)
		for (unsigned i = 0; i < HS_NUM_CLASSES; i++)
			hs_spin_init(&centrals[sh][i].lock);
	hs_central_shard_reinit();
}
