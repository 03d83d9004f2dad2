// SPDX-License-Identifier: MIT
/*
 * allocator/sampled_pages.c - runs of 8 KiB pages inside the sampled
 * region.
 *
 * Pages below `frontier` belong to runs that are in use (one per live
 * sample) or free; pages from `frontier` on were never handed out (or came
 * back and were merged into the frontier).  Free runs are of two kinds:
 *
 *  - cold: decommitted (MADV_DONTNEED), not resident, a new owner faults
 *    its pages in; never touch the frontier;
 *  - warm: freed recently and still committed, kept in least-recently-
 *    freed order and reused first, so a program that samples big blocks
 *    does not pay a page fault per 4 KiB of every sample (about 40 us each
 *    in a paravirtualised guest) nor a madvise and TLB flush per sampled
 *    free.  The budget (HEAPSCOPE_SAMPLED_CACHE, default 128 MiB like the
 *    page heap's HEAPSCOPE_RELEASE_RATE) is what the page heap keeps too:
 *    a program whose 1..16 MiB blocks are nearly all sampled reuses its
 *    sampled pages as it would reuse the page heap's spans.  The budget
 *    grows to twice the pages in use when that is more, a run far longer
 *    than the region's blocks ask for is not kept (admit), and above
 *    HEAPSCOPE_SAMPLED_CACHE a run not reused within a second goes cold
 *    (decay).  Past the budget the oldest warm run is decommitted and
 *    becomes cold.
 *
 * Each kind's runs are kept maximally coalesced (a warm run never merges
 * with a cold one) in size-bucketed doubly linked lists: one bucket per
 * length for 1..128 pages, one per power of two above, with a bitmap of
 * non-empty buckets, so allocation is a bitmap search plus (for long runs)
 * a bounded scan of one bucket, and free is O(1) with boundary tags.
 *
 * All metadata is in a side array (one 28-byte entry per region page),
 * never in the pages themselves.
 *
 * The region and the side array are address space (PROT_NONE) made
 * writable only up to the committed end (commit_pages), which the
 * frontier pushes forward in REGION_STEP steps: the kernel's overcommit
 * policy judges each step as it would a new mapping, so a sample or
 * large block the machine cannot back (malloc(64 GiB) here, 24 GiB of
 * RAM) is refused at once, and strict overcommit charges what the
 * region has used, not the 256 GiB reserved.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "sampled.h"

enum { TAG_NONE = 0, TAG_USED, TAG_FREE_HEAD, TAG_FREE_TAIL };
enum { COLD = 0, WARM = 1, NKINDS = 2 };

/*
 * TAG_USED:      len = pages, a = registry slot (or the caller's tag),
 *                older, newer = first page and count of the pages that
 *                may hold old data (the rest came decommitted or never
 *                used and reads as zeros)
 * TAG_FREE_HEAD: len = pages, a = next, b = prev in its bucket list;
 *                warm runs also: older / newer in the LRU list
 * TAG_FREE_TAIL: len = index of the run's head page (runs of 2+ pages)
 * TAG_NONE:      interior page, or beyond the frontier
 * kind: COLD or WARM for TAG_FREE_*, 0 otherwise.
 */
struct page_meta {
	uint16_t tag, kind;
	uint32_t len, a, b, older, newer;
	uint32_t freed_ms; /* warm head: when it was freed (coarse ms) */
};

#define NEXACT 128
#define NBUCKETS (NEXACT + 26)
#define NWORDS ((NBUCKETS + 63) / 64)
#define SCAN_LIMIT 32

/* Committed in steps of this many bytes of region (2 MiB: one mprotect
 * per 256 pages of frontier growth) and of side array. */
#define REGION_STEP ((size_t)2 << 20)
#define META_STEP ((size_t)64 << 10)

static uintptr_t base;
static uint32_t npages, frontier;
static uint32_t committed; /* pages [0, committed) writable, and their meta */
static hs_lazy_t region_mem, meta_mem;
static struct page_meta *meta;
static uint32_t bucket_head[NKINDS][NBUCKETS];
static uint64_t bitmap[NKINDS][NWORDS];
static uint64_t in_use;
static uint64_t warm_pages, warm_limit, recycled_pages;
static uint32_t lru_oldest = HS_PAGES_NONE, lru_newest = HS_PAGES_NONE;

static uint64_t asked_len16; /* see admit() */

static void decay(uint32_t now);

/* Bytes reserved for the side array: one entry per region page. */
static size_t meta_bytes(void)
{
	return ((size_t)npages * sizeof(struct page_meta) + 0xFFFF) &
	       ~(size_t)0xFFFF;
}

int hs_pages_init(uintptr_t region, uint32_t pages, uint64_t cache_pages)
{
	npages = pages;
	if (hs_lazy_init(&meta_mem, meta_bytes(), 1 << 16)) {
		npages = 0;
		return -ENOMEM;
	}
	meta = (struct page_meta *)meta_mem.base;
	region_mem = (hs_lazy_t){.base = (char *)region,
				 .size = (size_t)pages << HS_PAGE_SHIFT};
	committed = 0;
	for (int k = 0; k < NKINDS; k++)
		for (int i = 0; i < NBUCKETS; i++)
			bucket_head[k][i] = HS_PAGES_NONE;
	base = region;
	frontier = 0;
	warm_limit = cache_pages;
	return 0;
}

/* Make pages [0, end) and their side-array entries writable.  false when
 * the kernel refuses (nothing the allocator sees changed). */
static bool commit_pages(uint64_t end)
{
	if (end <= committed)
		return true;
	if (end > npages ||
	    hs_lazy_commit(&region_mem, end << HS_PAGE_SHIFT, REGION_STEP))
		return false;
	/* (a region committed ahead of its index is only charged early) */
	uint64_t got = region_mem.committed >> HS_PAGE_SHIFT;
	if (hs_lazy_commit(&meta_mem, got * sizeof(struct page_meta),
			   META_STEP))
		return false;
	committed = (uint32_t)got;
	return true;
}

static unsigned bucket_of(uint32_t len)
{
	if (len <= NEXACT)
		return len - 1;
	return NEXACT + (31 - __builtin_clz(len)) - 7;
}

static void list_push(uint32_t s)
{
	unsigned k = meta[s].kind, b = bucket_of(meta[s].len);
	uint32_t h = bucket_head[k][b];

	meta[s].a = h;
	meta[s].b = HS_PAGES_NONE;
	if (h != HS_PAGES_NONE)
		meta[h].b = s;
	bucket_head[k][b] = s;
	bitmap[k][b / 64] |= (uint64_t)1 << (b % 64);
}

static void list_remove(uint32_t s)
{
	unsigned k = meta[s].kind, b = bucket_of(meta[s].len);
	uint32_t next = meta[s].a, prev = meta[s].b;

	if (prev != HS_PAGES_NONE)
		meta[prev].a = next;
	else
		bucket_head[k][b] = next;
	if (next != HS_PAGES_NONE)
		meta[next].b = prev;
	if (bucket_head[k][b] == HS_PAGES_NONE)
		bitmap[k][b / 64] &= ~((uint64_t)1 << (b % 64));
}

static void lru_push_newest(uint32_t s)
{
	meta[s].older = lru_newest;
	meta[s].newer = HS_PAGES_NONE;
	if (lru_newest != HS_PAGES_NONE)
		meta[lru_newest].newer = s;
	else
		lru_oldest = s;
	lru_newest = s;
}

static void lru_remove(uint32_t s)
{
	uint32_t older = meta[s].older, newer = meta[s].newer;

	if (older != HS_PAGES_NONE)
		meta[older].newer = newer;
	else
		lru_oldest = newer;
	if (newer != HS_PAGES_NONE)
		meta[newer].older = older;
	else
		lru_newest = older;
}

/* t: for a warm run, when its pages were freed (a piece cut from a warm
 * run keeps the run's time, so the decay sees its real age). */
static void make_free(uint32_t s, uint32_t len, unsigned kind, uint32_t t)
{
	meta[s] = (struct page_meta){
		.tag = TAG_FREE_HEAD, .kind = (uint16_t)kind, .len = len};
	if (len > 1)
		meta[s + len - 1] = (struct page_meta){
			.tag = TAG_FREE_TAIL, .kind = (uint16_t)kind, .len = s};
	list_push(s);
	if (kind == WARM) {
		meta[s].freed_ms = t;
		lru_push_newest(s);
		warm_pages += len;
	}
}

/* Take a free run out of its lists and clear its tags; returns its length. */
static uint32_t unmake_free(uint32_t s)
{
	uint32_t len = meta[s].len;

	list_remove(s);
	if (meta[s].kind == WARM) {
		lru_remove(s);
		warm_pages -= len;
	}
	if (len > 1)
		meta[s + len - 1] = (struct page_meta){0};
	meta[s] = (struct page_meta){0};
	return len;
}

/* First non-empty bucket >= b of kind k, or NBUCKETS. */
static unsigned next_bucket(unsigned k, unsigned b)
{
	for (unsigned w = b / 64; w < NWORDS; w++) {
		uint64_t bits = bitmap[k][w];

		if (w == b / 64)
			bits &= ~(uint64_t)0 << (b % 64);
		if (bits)
			return w * 64 + (unsigned)__builtin_ctzll(bits);
	}
	return NBUCKETS;
}

/* The shortest run of at least need pages among the first SCAN_LIMIT
 * of log bucket b of kind k (the lowest of equal ones), or
 * HS_PAGES_NONE. */
static uint32_t best_in_bucket(unsigned k, unsigned b, uint32_t need)
{
	uint32_t best = HS_PAGES_NONE, s = bucket_head[k][b];

	for (int i = 0; s != HS_PAGES_NONE && i < SCAN_LIMIT; i++) {
		if (meta[s].len >= need &&
		    (best == HS_PAGES_NONE || meta[s].len < meta[best].len ||
		     (meta[s].len == meta[best].len && s < best)))
			best = s;
		s = meta[s].a;
	}
	return best;
}

/* A free run of kind k of at least need pages, taken out of the lists;
 * *len gets its length.  Best fit: an exact bucket's head, or the
 * shortest fitting run among the first SCAN_LIMIT of a log bucket.  (The
 * first run that fit, taken before, left holes no later large block fit:
 * large_blocks at 2 threads, large blocks in the region, sampling off:
 * 45.7k page faults in 3 of 4 runs, 43.9k with best fit, median of 7 with
 * the lowest of equal runs 36.8k, the page heap 34.8k.) */
static uint32_t find_free(unsigned k, uint32_t need, uint32_t *len, uint32_t *t)
{
	unsigned b = bucket_of(need);
	uint32_t s = HS_PAGES_NONE;

	if (b >= NEXACT) {
		/* a log bucket holds [2^j, 2^(j+1)): look for a fit */
		s = best_in_bucket(k, b, need);
		b++;
	}
	if (s == HS_PAGES_NONE) {
		b = next_bucket(k, b);
		if (b >= NBUCKETS)
			return HS_PAGES_NONE;
		s = b >= NEXACT ? best_in_bucket(k, b, need)
				: bucket_head[k][b];
	}
	*t = meta[s].freed_ms;
	*len = unmake_free(s);
	return s;
}

/* Carve [a, a + n) out of the free run [s, s + len) of kind k; the rest
 * stays free, of the same kind. */
static void carve(uint32_t s, uint32_t len, uint32_t a, uint32_t n, unsigned k,
		  uint32_t t)
{
	if (a > s)
		make_free(s, a - s, k, t);
	if (s + len > a + n)
		make_free(a + n, s + len - (a + n), k, t);
}

/* The head of the free run of kind k that ends just before page s, or
 * HS_PAGES_NONE.  (A head at s - 1 is a one-page run.) */
static uint32_t left_free(uint32_t s, unsigned k)
{
	if (s == 0 || meta[s - 1].kind != k)
		return HS_PAGES_NONE;
	if (meta[s - 1].tag == TAG_FREE_TAIL)
		return meta[s - 1].len;
	if (meta[s - 1].tag == TAG_FREE_HEAD)
		return s - 1;
	return HS_PAGES_NONE;
}

static bool right_free(uint32_t e, unsigned k)
{
	return e < frontier && meta[e].tag == TAG_FREE_HEAD &&
	       meta[e].kind == k;
}

/* No warm run holds n pages: the warm run (among the SCAN_LIMIT newest)
 * that, with its cold neighbours or the frontier, holds n pages and
 * covers most of them, so a sample only faults in what the warm run
 * lacks (the page heap merges committed and released spans the same
 * way).  Returns the first page of [a, a + n), taken out of the lists
 * with the leftover cold pieces put back, or HS_PAGES_NONE. */
static uint32_t merge_warm(uint32_t n, uint32_t *dirty, uint32_t *ndirty)
{
	uint32_t best = HS_PAGES_NONE, best_len = 0, i = 0;

	for (uint32_t w = lru_newest; w != HS_PAGES_NONE && i < SCAN_LIMIT;
	     w = meta[w].older, i++) {
		uint32_t len = meta[w].len, e = w + len;
		uint64_t lo = w, hi = e;

		if (len >= n || len <= best_len)
			continue;
		uint32_t h = left_free(w, COLD);
		if (h != HS_PAGES_NONE)
			lo = h;
		if (e == frontier)
			/* the pages past the frontier, if the kernel
			 * backs them */
			hi = commit_pages(lo + n) ? npages : committed;
		else if (right_free(e, COLD))
			hi = (uint64_t)e + meta[e].len;
		if (hi - lo >= n) {
			best = w;
			best_len = len;
		}
	}
	if (best == HS_PAGES_NONE)
		return HS_PAGES_NONE;

	uint32_t w = best, e = w + best_len, h = left_free(w, COLD);
	uint32_t lo = h != HS_PAGES_NONE ? h : w;
	/* ends at e if the cold run on the left is long enough, else starts
	 * at its head and goes on into the cold run or frontier on the right */
	uint32_t a = e >= n && e - n >= lo ? e - n : lo;
	uint32_t start = w, end = e;
	if (a < w)
		start = h, unmake_free(h);
	unmake_free(w);
	recycled_pages += best_len;
	if (a + n > e) {
		if (e == frontier)
			frontier = end = a + n;
		else
			end = e + unmake_free(e);
	}
	/* the cold pieces left on either side go back */
	carve(start, end - start, a, n, COLD, 0);
	/* only the warm run's pages may hold old data: a calloc that
	 * cleared all of [a, a + n) made 8 GiB resident for a run of a few
	 * warm pages beside cold ones */
	uint32_t dlo = w > a ? w : a, dhi = e < a + n ? e : a + n;
	*dirty = dlo - a;
	*ndirty = dhi > dlo ? dhi - dlo : 0;
	return a;
}

uint32_t hs_pages_alloc(uint32_t n, uint32_t align_pages, uint32_t slot)
{
	uint64_t need = (uint64_t)n + align_pages - 1;
	uint32_t s, len, a, t, dirty = 0, ndirty = n;

	if (n == 0 || align_pages == 0 || need > npages)
		return HS_PAGES_NONE;
	decay(hs_os_coarse_ms());
	asked_len16 = asked_len16 - asked_len16 / 16 + need;
	if (warm_pages >= need &&
	    (s = find_free(WARM, (uint32_t)need, &len, &t)) != HS_PAGES_NONE) {
		a = (s + align_pages - 1) & ~(align_pages - 1);
		carve(s, len, a, n, WARM, t);
		recycled_pages += n;
	} else if (align_pages == 1 && warm_pages &&
		   (a = merge_warm(n, &dirty, &ndirty)) != HS_PAGES_NONE) {
		/* taken out of the lists, leftovers put back */
	} else if ((s = find_free(COLD, (uint32_t)need, &len, &t)) !=
		   HS_PAGES_NONE) {
		a = (s + align_pages - 1) & ~(align_pages - 1);
		carve(s, len, a, n, COLD, 0);
		ndirty = 0;
	} else {
		a = (frontier + align_pages - 1) & ~(align_pages - 1);
		if ((uint64_t)a + n > npages || !commit_pages((uint64_t)a + n))
			return HS_PAGES_NONE;
		if (a > frontier)
			make_free(frontier, a - frontier, COLD, 0);
		frontier = a + n;
		ndirty = 0;
	}
	meta[a] = (struct page_meta){.tag = TAG_USED,
				     .len = n,
				     .a = slot,
				     .older = dirty,
				     .newer = ndirty};
	in_use += n;
	return a;
}

bool hs_pages_extend(uint32_t page, uint32_t n)
{
	uint32_t len = meta[page].len, e = page + len, need, flen;
	unsigned k;

	if (n <= len)
		return true;
	need = n - len;
	if (e == frontier) {
		if ((uint64_t)e + need > npages ||
		    !commit_pages((uint64_t)e + need))
			return false;
		frontier += need;
	} else if (e < frontier && meta[e].tag == TAG_FREE_HEAD &&
		   meta[e].len >= need) {
		k = meta[e].kind;
		uint32_t t = meta[e].freed_ms;
		flen = unmake_free(e);
		if (flen > need)
			make_free(e + need, flen - need, k, t);
		if (k == WARM)
			recycled_pages += need;
	} else {
		return false;
	}
	meta[page].len = n;
	in_use += need;
	return true;
}

void hs_pages_set_slot(uint32_t page, uint32_t slot)
{
	meta[page].a = slot;
}

uint32_t hs_pages_slot(uint32_t page)
{
	if (page >= frontier || meta[page].tag != TAG_USED)
		return HS_PAGES_NONE;
	return meta[page].a;
}

uint32_t hs_pages_len(uint32_t page)
{
	return meta[page].len;
}

void hs_pages_dirty(uint32_t page, uint32_t *first, uint32_t *count)
{
	*first = meta[page].older;
	*count = meta[page].newer;
}

/* Decommit the pages [s, s + len) (not in any list) and make them a cold
 * run, merged with cold neighbours or into the frontier. */
static void release_cold(uint32_t s, uint32_t len)
{
	uint32_t h = left_free(s, COLD), e = s + len;

	/* MADV_DONTNEED never splits the region's single VMA */
	hs_os_decommit((void *)(base + ((uintptr_t)s << HS_PAGE_SHIFT)),
		       (size_t)len << HS_PAGE_SHIFT);
	if (h != HS_PAGES_NONE) {
		len += unmake_free(h);
		s = h;
	}
	if (e == frontier) {
		frontier = s;
		return;
	}
	if (right_free(e, COLD))
		len += unmake_free(e);
	make_free(s, len, COLD, 0);
}

/* Keep [s, s + len) (not in any list, still committed) as the newest
 * warm run, merged with warm neighbours. */
static void keep_warm(uint32_t s, uint32_t len, uint32_t now)
{
	uint32_t h = left_free(s, WARM), e = s + len;

	if (h != HS_PAGES_NONE) {
		len += unmake_free(h);
		s = h;
	}
	if (right_free(e, WARM))
		len += unmake_free(e);
	make_free(s, len, WARM, now);
}

static void evict_oldest(void)
{
	uint32_t s = lru_oldest;

	release_cold(s, unmake_free(s));
}

/* The warm budget: HEAPSCOPE_SAMPLED_CACHE or twice the pages in use
 * (samples and large blocks), whichever is more (the page heap keeps free
 * memory the same way: a few large blocks per thread need more than a
 * fixed 64 MiB between them), none when the option is 0; and above
 * HEAPSCOPE_SAMPLED_CACHE a warm run not reused within CACHE_DECAY_MS
 * goes cold (checked on allocations and frees in the region).
 * A budget that followed the mean freed run length instead kept
 * realloc_growth from reusing its big runs (2.6x the page faults). */
#define CACHE_DECAY_MS 1000u

/* While more than HEAPSCOPE_SAMPLED_CACHE is kept (the budget grew with
 * the pages in use), warm runs older than CACHE_DECAY_MS go cold, oldest
 * first; up to HEAPSCOPE_SAMPLED_CACHE stays, as the page heap keeps its
 * HEAPSCOPE_RELEASE_RATE floor: the region also holds large unsampled
 * blocks, and a program that frees and reallocates a big buffer every
 * few seconds would fault it in again each time.  A scan of the LRU list
 * (pieces cut from a run keep its time but go to the newest end), at
 * most every CACHE_DECAY_MS / 4. */
static uint32_t last_decay;
static void decay(uint32_t now)
{
	if (now - last_decay < CACHE_DECAY_MS / 4)
		return;
	last_decay = now;
	for (uint32_t s = lru_oldest, next;
	     s != HS_PAGES_NONE && warm_pages > warm_limit; s = next) {
		next = meta[s].newer;
		if (now - meta[s].freed_ms > CACHE_DECAY_MS)
			release_cold(s, unmake_free(s));
	}
}

static uint64_t cache_limit(void)
{
	if (warm_limit == 0) /* HEAPSCOPE_SAMPLED_CACHE=0: no cache */
		return 0;
	return 2 * in_use > warm_limit ? 2 * in_use : warm_limit;
}

/* Moving mean of the run lengths samples asked for (x16, weight 1/16).
 * A freed run more than ADMIT_FACTOR times as long (and over 2 MiB) is
 * not cached: no sample is likely to want it before it decays, and it
 * would sit on top of the heap's growth (sqlite3: a one-off 8 MiB
 * sampled block kept resident raised its peak RSS by 8 MiB). */
#define ADMIT_FACTOR 64
#define ADMIT_MIN_PAGES 256

static bool admit(uint32_t n)
{
	return n <= ADMIT_MIN_PAGES ||
	       (uint64_t)n * 16 <= ADMIT_FACTOR * asked_len16;
}

void hs_pages_free(uint32_t page)
{
	uint32_t n = meta[page].len;

	meta[page] = (struct page_meta){0};
	in_use -= n;
	uint64_t limit = cache_limit();
	if (n > limit || !admit(n)) {
		release_cold(page, n);
		return;
	}
	uint32_t now = hs_os_coarse_ms();
	keep_warm(page, n, now);
	while (warm_pages > limit)
		evict_oldest();
	decay(now);
}

uint64_t hs_pages_trim(void)
{
	uint64_t released = warm_pages;

	while (lru_oldest != HS_PAGES_NONE)
		evict_oldest();
	/* Entries from the frontier on are all zero (TAG_NONE): give their
	 * whole 4 KiB pages back; they read back as zero.  After a freed
	 * heap's samples are gone the frontier is back near 0 (cold runs
	 * that reach it merge into it), and this was ~70 KiB of metadata
	 * left resident after a 256 MiB heap was built, freed and trimmed. */
	uintptr_t lo = ((uintptr_t)&meta[frontier] + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = (uintptr_t)meta + meta_mem.committed;
	if (hi > lo)
		hs_os_decommit((void *)lo, hi - lo);
	return released;
}

uint64_t hs_pages_in_use(void)
{
	return in_use;
}

uint64_t hs_pages_cached(void)
{
	return warm_pages;
}

uint64_t hs_pages_recycled(void)
{
	return recycled_pages;
}

/* Check one kind's bucket lists; returns the runs listed or -1. */
static int64_t check_lists(unsigned k)
{
	int64_t listed = 0;

	for (unsigned b = 0; b < NBUCKETS; b++) {
		uint32_t prev = HS_PAGES_NONE;
		int bit = !!(bitmap[k][b / 64] & ((uint64_t)1 << (b % 64)));

		if (bit != (bucket_head[k][b] != HS_PAGES_NONE))
			return -1;
		for (uint32_t s = bucket_head[k][b]; s != HS_PAGES_NONE;
		     s = meta[s].a) {
			if (s >= frontier || meta[s].tag != TAG_FREE_HEAD ||
			    meta[s].kind != k || bucket_of(meta[s].len) != b ||
			    meta[s].b != prev)
				return -1;
			prev = s;
			listed++;
		}
	}
	return listed;
}

int hs_pages_is_valid(void)
{
	uint64_t used = 0, free_runs[NKINDS] = {0}, warm = 0, lru = 0;
	int prev_kind = -1; /* kind of the previous run if free, else -1 */
	uint32_t prev = HS_PAGES_NONE;

	for (uint32_t p = 0; p < frontier;) {
		struct page_meta m = meta[p];

		if (m.tag != TAG_USED && m.tag != TAG_FREE_HEAD)
			return -1; /* not a run start */
		if (m.len == 0 || (uint64_t)p + m.len > frontier)
			return -2;
		if (m.tag == TAG_FREE_HEAD) {
			if (m.kind >= NKINDS || prev_kind == (int)m.kind)
				return -3; /* two adjacent runs of a kind */
			if (m.len > 1 &&
			    (meta[p + m.len - 1].tag != TAG_FREE_TAIL ||
			     meta[p + m.len - 1].len != p ||
			     meta[p + m.len - 1].kind != m.kind))
				return -4;
			free_runs[m.kind]++;
			if (m.kind == WARM)
				warm += m.len;
		} else {
			used += m.len;
		}
		for (uint32_t i = 1; i + 1 < m.len; i++)
			if (meta[p + i].tag != TAG_NONE)
				return -5; /* stale tag inside a run */
		if (m.tag == TAG_USED && m.len > 1 &&
		    meta[p + m.len - 1].tag != TAG_NONE)
			return -5;
		prev_kind = m.tag == TAG_FREE_HEAD ? (int)m.kind : -1;
		p += m.len;
	}
	if (prev_kind == COLD)
		return -6; /* a cold run touches the frontier */
	if (used != in_use || warm != warm_pages)
		return -7;
	for (unsigned k = 0; k < NKINDS; k++)
		if (check_lists(k) != (int64_t)free_runs[k])
			return -8;
	for (uint32_t s = lru_oldest; s != HS_PAGES_NONE; s = meta[s].newer) {
		if (s >= frontier || meta[s].tag != TAG_FREE_HEAD ||
		    meta[s].kind != WARM || meta[s].older != prev)
			return -9;
		prev = s;
		lru++;
	}
	if (prev != lru_newest || lru != free_runs[WARM] ||
	    warm > cache_limit())
		return -10;
	return 0;
}
