// SPDX-License-Identifier: MIT
/*
 * allocator/region/pages.c - runs of 8 KiB pages inside the sampled
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
 * writable only up to the committed end (hs_pages_commit), which the
 * frontier pushes forward in REGION_STEP steps: the kernel's overcommit
 * policy judges each step as it would a new mapping, so a sample or
 * large block the machine cannot back (malloc(64 GiB) here, 24 GiB of
 * RAM) is refused at once, and strict overcommit charges what the
 * region has used, not the 256 GiB reserved.
 *
 * This file holds the run index (tags, buckets, allocation, extension,
 * coalescing, the checker); the warm cache's policy (which freed runs
 * stay warm, decay, the merge of a warm run with cold neighbours) is
 * pages_cache.c.  Both share the state in pages_internal.h.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/os.h"
#include "base/stats.h"
#include "region/pages.h"
#include "region/pages_internal.h"

HS_TLS uint32_t hs_pages_fresh;

struct hs_pages_state hs_pg = {
	.lru_oldest = HS_PAGES_NONE,
	.lru_newest = HS_PAGES_NONE,
};

/* Bytes reserved for the side array: one entry per region page. */
static size_t meta_bytes(void)
{
	return ((size_t)hs_pg.npages * sizeof(struct page_meta) + 0xFFFF) &
	       ~(size_t)0xFFFF;
}

int hs_pages_init(uintptr_t region, uint32_t pages, uint64_t cache_pages)
{
	hs_pg.npages = pages;
	if (hs_lazy_init(&hs_pg.meta_mem, meta_bytes(), 1 << 16)) {
		hs_pg.npages = 0;
		return -ENOMEM;
	}
	hs_pg.meta = (struct page_meta *)hs_pg.meta_mem.base;
	hs_pg.region_mem = (hs_lazy_t){.base = (char *)region,
				       .size = (size_t)pages << HS_PAGE_SHIFT};
	hs_pg.committed = 0;
	for (int k = 0; k < NKINDS; k++)
		for (int i = 0; i < NBUCKETS; i++)
			hs_pg.bucket_head[k][i] = HS_PAGES_NONE;
	hs_pg.base = region;
	hs_pg.frontier = 0;
	hs_pg.warm_limit = cache_pages;
	hs_stats_publish_runs(
		region, (uint64_t)(uintptr_t)hs_pg.meta, pages, &hs_pg.frontier,
		sizeof(struct page_meta), offsetof(struct page_meta, tag),
		offsetof(struct page_meta, len), TAG_USED, TAG_FREE_HEAD);
	return 0;
}

bool hs_pages_commit(uint64_t end)
{
	if (end <= hs_pg.committed)
		return true;
	if (end > hs_pg.npages ||
	    hs_lazy_commit(&hs_pg.region_mem, end << HS_PAGE_SHIFT, REGION_STEP))
		return false;
	/* (a region committed ahead of its index is only charged early) */
	uint64_t got = hs_pg.region_mem.committed >> HS_PAGE_SHIFT;
	if (hs_lazy_commit(&hs_pg.meta_mem, got * sizeof(struct page_meta),
			   META_STEP))
		return false;
	hs_pg.committed = (uint32_t)got;
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
	unsigned k = hs_pg.meta[s].kind, b = bucket_of(hs_pg.meta[s].len);
	uint32_t h = hs_pg.bucket_head[k][b];

	hs_pg.meta[s].a = h;
	hs_pg.meta[s].b = HS_PAGES_NONE;
	if (h != HS_PAGES_NONE)
		hs_pg.meta[h].b = s;
	hs_pg.bucket_head[k][b] = s;
	hs_pg.bitmap[k][b / 64] |= (uint64_t)1 << (b % 64);
}

static void list_remove(uint32_t s)
{
	unsigned k = hs_pg.meta[s].kind, b = bucket_of(hs_pg.meta[s].len);
	uint32_t next = hs_pg.meta[s].a, prev = hs_pg.meta[s].b;

	if (prev != HS_PAGES_NONE)
		hs_pg.meta[prev].a = next;
	else
		hs_pg.bucket_head[k][b] = next;
	if (next != HS_PAGES_NONE)
		hs_pg.meta[next].b = prev;
	if (hs_pg.bucket_head[k][b] == HS_PAGES_NONE)
		hs_pg.bitmap[k][b / 64] &= ~((uint64_t)1 << (b % 64));
}

static void lru_push_newest(uint32_t s)
{
	hs_pg.meta[s].older = hs_pg.lru_newest;
	hs_pg.meta[s].newer = HS_PAGES_NONE;
	if (hs_pg.lru_newest != HS_PAGES_NONE)
		hs_pg.meta[hs_pg.lru_newest].newer = s;
	else
		hs_pg.lru_oldest = s;
	hs_pg.lru_newest = s;
}

static void lru_remove(uint32_t s)
{
	uint32_t older = hs_pg.meta[s].older, newer = hs_pg.meta[s].newer;

	if (older != HS_PAGES_NONE)
		hs_pg.meta[older].newer = newer;
	else
		hs_pg.lru_oldest = newer;
	if (newer != HS_PAGES_NONE)
		hs_pg.meta[newer].older = older;
	else
		hs_pg.lru_newest = older;
}

/* t: for a warm run, when its pages were freed (a piece cut from a warm
 * run keeps the run's time, so the decay sees its real age). */
void hs_pages_make_free(uint32_t s, uint32_t len, unsigned kind, uint32_t t)
{
	hs_pg.meta[s] = (struct page_meta){
		.tag = TAG_FREE_HEAD, .kind = (uint16_t)kind, .len = len};
	if (len > 1)
		hs_pg.meta[s + len - 1] = (struct page_meta){
			.tag = TAG_FREE_TAIL, .kind = (uint16_t)kind, .len = s};
	list_push(s);
	if (kind == WARM) {
		hs_pg.meta[s].freed_ms = t;
		lru_push_newest(s);
		hs_pg.warm_pages += len;
	}
}

/* Take a free run out of its lists and clear its tags; returns its length. */
uint32_t hs_pages_unmake_free(uint32_t s)
{
	uint32_t len = hs_pg.meta[s].len;

	list_remove(s);
	if (hs_pg.meta[s].kind == WARM) {
		lru_remove(s);
		hs_pg.warm_pages -= len;
	}
	if (len > 1)
		hs_pg.meta[s + len - 1] = (struct page_meta){0};
	hs_pg.meta[s] = (struct page_meta){0};
	return len;
}

/* First non-empty bucket >= b of kind k, or NBUCKETS. */
static unsigned next_bucket(unsigned k, unsigned b)
{
	for (unsigned w = b / 64; w < NWORDS; w++) {
		uint64_t bits = hs_pg.bitmap[k][w];

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
	uint32_t best = HS_PAGES_NONE, s = hs_pg.bucket_head[k][b];

	for (int i = 0; s != HS_PAGES_NONE && i < SCAN_LIMIT; i++) {
		if (hs_pg.meta[s].len >= need &&
		    (best == HS_PAGES_NONE ||
		     hs_pg.meta[s].len < hs_pg.meta[best].len ||
		     (hs_pg.meta[s].len == hs_pg.meta[best].len && s < best)))
			best = s;
		s = hs_pg.meta[s].a;
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
				: hs_pg.bucket_head[k][b];
	}
	*t = hs_pg.meta[s].freed_ms;
	*len = hs_pages_unmake_free(s);
	return s;
}

/* Carve [a, a + n) out of the free run [s, s + len) of kind k; the rest
 * stays free, of the same kind. */
void hs_pages_carve(uint32_t s, uint32_t len, uint32_t a, uint32_t n,
		    unsigned k, uint32_t t)
{
	if (a > s)
		hs_pages_make_free(s, a - s, k, t);
	if (s + len > a + n)
		hs_pages_make_free(a + n, s + len - (a + n), k, t);
}

/* The head of the free run of kind k that ends just before page s, or
 * HS_PAGES_NONE.  (A head at s - 1 is a one-page run.) */
uint32_t hs_pages_left_free(uint32_t s, unsigned k)
{
	if (s == 0 || hs_pg.meta[s - 1].kind != k)
		return HS_PAGES_NONE;
	if (hs_pg.meta[s - 1].tag == TAG_FREE_TAIL)
		return hs_pg.meta[s - 1].len;
	if (hs_pg.meta[s - 1].tag == TAG_FREE_HEAD)
		return s - 1;
	return HS_PAGES_NONE;
}

bool hs_pages_right_free(uint32_t e, unsigned k)
{
	return e < hs_pg.frontier && hs_pg.meta[e].tag == TAG_FREE_HEAD &&
	       hs_pg.meta[e].kind == k;
}

/* The whole huge pages inside the run of len pages at page: [*lo, *hi),
 * addresses; false when it holds none. */
static bool huge_part(uint32_t page, uint32_t len, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t s = hs_pg.base + ((uintptr_t)page << HS_PAGE_SHIFT);
	uintptr_t e = s + ((uintptr_t)len << HS_PAGE_SHIFT);

	*lo = (s + HS_HUGE_PAGE - 1) & ~(uintptr_t)(HS_HUGE_PAGE - 1);
	*hi = e & ~(uintptr_t)(HS_HUGE_PAGE - 1);
	return *hi > *lo;
}

void hs_pages_set_huge(uint32_t page)
{
	uintptr_t lo, hi;

	hs_assert(page < hs_pg.frontier && hs_pg.meta[page].tag == TAG_USED);
	hs_pg.meta[page].kind = USED_HUGE;
	if (huge_part(page, hs_pg.meta[page].len, &lo, &hi))
		hs_os_hugepage((void *)lo, hi - lo);
}

void hs_pages_clear_huge(uint32_t page)
{
	uintptr_t lo, hi;

	if (hs_pg.meta[page].kind != USED_HUGE)
		return;
	hs_pg.meta[page].kind = 0;
	/* the region's flag again: its VMAs merge back into one */
	if (huge_part(page, hs_pg.meta[page].len, &lo, &hi))
		hs_os_nohugepage((void *)lo, hi - lo);
}

uint32_t hs_pages_alloc(uint32_t n, uint32_t align_pages, uint32_t slot)
{
	uint64_t need = (uint64_t)n + align_pages - 1;
	uint32_t s, len, a, t, dirty = 0, ndirty = n;

	if (n == 0 || align_pages == 0 || need > hs_pg.npages)
		return HS_PAGES_NONE;
	hs_pages_decay(hs_clock_coarse_ms());
	hs_pg.asked_len16 = hs_pg.asked_len16 - hs_pg.asked_len16 / 16 + need;
	if (hs_pg.warm_pages >= need &&
	    (s = find_free(WARM, (uint32_t)need, &len, &t)) != HS_PAGES_NONE) {
		a = (s + align_pages - 1) & ~(align_pages - 1);
		hs_pages_carve(s, len, a, n, WARM, t);
		hs_pg.recycled_pages += n;
	} else if (align_pages == 1 && hs_pg.warm_pages &&
		   (a = hs_pages_merge_warm(n, &dirty, &ndirty)) != HS_PAGES_NONE) {
		/* taken out of the lists, leftovers put back */
	} else if ((s = find_free(COLD, (uint32_t)need, &len, &t)) !=
		   HS_PAGES_NONE) {
		a = (s + align_pages - 1) & ~(align_pages - 1);
		hs_pages_carve(s, len, a, n, COLD, 0);
		ndirty = 0;
	} else {
		a = (hs_pg.frontier + align_pages - 1) & ~(align_pages - 1);
		if ((uint64_t)a + n > hs_pg.npages ||
		    !hs_pages_commit((uint64_t)a + n))
			return HS_PAGES_NONE;
		if (a > hs_pg.frontier)
			hs_pages_make_free(hs_pg.frontier, a - hs_pg.frontier,
					   COLD, 0);
		hs_pg.frontier = a + n;
		ndirty = 0;
	}
	hs_pg.meta[a] = (struct page_meta){.tag = TAG_USED,
					   .len = n,
					   .a = slot,
					   .older = dirty,
					   .newer = ndirty};
	hs_pg.in_use += n;
	hs_pages_fresh = n - ndirty;
	hs_assert_internal(hs_pg.meta[a].tag == TAG_USED &&
			   hs_pg.meta[a].len == n && a + n <= hs_pg.frontier);
	return a;
}

bool hs_pages_extend(uint32_t page, uint32_t n)
{
	uint32_t len = hs_pg.meta[page].len, e = page + len, need, flen;
	unsigned k = COLD;

	if (n <= len) {
		hs_pages_fresh = 0;
		return true;
	}
	need = n - len;
	if (e == hs_pg.frontier) {
		if ((uint64_t)e + need > hs_pg.npages ||
		    !hs_pages_commit((uint64_t)e + need))
			return false;
		hs_pg.frontier += need;
	} else if (e < hs_pg.frontier && hs_pg.meta[e].tag == TAG_FREE_HEAD &&
		   hs_pg.meta[e].len >= need) {
		k = hs_pg.meta[e].kind;
		uint32_t t = hs_pg.meta[e].freed_ms;
		flen = hs_pages_unmake_free(e);
		if (flen > need)
			hs_pages_make_free(e + need, flen - need, k, t);
		if (k == WARM)
			hs_pg.recycled_pages += need;
	} else {
		return false;
	}
	hs_pg.meta[page].len = n;
	hs_pg.in_use += need;
	hs_pages_fresh = k == WARM ? 0 : need;
	if (hs_pg.meta[page].kind == USED_HUGE)
		hs_pages_set_huge(page); /* the grown part too */
	return true;
}

void hs_pages_set_slot(uint32_t page, uint32_t slot)
{
	hs_assert(page < hs_pg.frontier && hs_pg.meta[page].tag == TAG_USED);
	hs_pg.meta[page].a = slot;
}

uint32_t hs_pages_slot(uint32_t page)
{
	if (page >= hs_pg.frontier || hs_pg.meta[page].tag != TAG_USED)
		return HS_PAGES_NONE;
	return hs_pg.meta[page].a;
}

uint32_t hs_pages_len(uint32_t page)
{
	return hs_pg.meta[page].len;
}

void hs_pages_dirty(uint32_t page, uint32_t *first, uint32_t *count)
{
	*first = hs_pg.meta[page].older;
	*count = hs_pg.meta[page].newer;
}

/* Decommit the pages [s, s + len) (not in any list) and make them a cold
 * run, merged with cold neighbours or into the frontier. */
void hs_pages_release_cold(uint32_t s, uint32_t len)
{
	uint32_t h = hs_pages_left_free(s, COLD), e = s + len;

	/* MADV_DONTNEED never splits the region's single VMA */
	hs_os_decommit((void *)(hs_pg.base + ((uintptr_t)s << HS_PAGE_SHIFT)),
		       (size_t)len << HS_PAGE_SHIFT);
	if (h != HS_PAGES_NONE) {
		len += hs_pages_unmake_free(h);
		s = h;
	}
	if (e == hs_pg.frontier) {
		hs_pg.frontier = s;
		return;
	}
	if (hs_pages_right_free(e, COLD))
		len += hs_pages_unmake_free(e);
	hs_pages_make_free(s, len, COLD, 0);
}

uint64_t hs_pages_trim(void)
{
	uint64_t released = hs_pg.warm_pages;

	while (hs_pg.lru_oldest != HS_PAGES_NONE)
		hs_pages_evict_oldest();
	/* Entries from the frontier on are all zero (TAG_NONE): give their
	 * whole 4 KiB pages back; they read back as zero.  After a freed
	 * heap's samples are gone the frontier is back near 0 (cold runs
	 * that reach it merge into it), and this was ~70 KiB of metadata
	 * left resident after a 256 MiB heap was built, freed and trimmed. */
	uintptr_t lo = ((uintptr_t)&hs_pg.meta[hs_pg.frontier] + 4095) &
		       ~(uintptr_t)4095;
	uintptr_t hi = (uintptr_t)hs_pg.meta + hs_pg.meta_mem.committed;
	if (hi > lo)
		hs_os_decommit((void *)lo, hi - lo);
	hs_assert_expensive(hs_pages_is_valid() == 0);
	return released;
}

/* Check one kind's bucket lists; returns the runs listed or -1. */
static int64_t check_lists(unsigned k)
{
	int64_t listed = 0;

	for (unsigned b = 0; b < NBUCKETS; b++) {
		uint32_t prev = HS_PAGES_NONE;
		int bit =
			!!(hs_pg.bitmap[k][b / 64] & ((uint64_t)1 << (b % 64)));

		if (bit != (hs_pg.bucket_head[k][b] != HS_PAGES_NONE))
			return -1;
		for (uint32_t s = hs_pg.bucket_head[k][b]; s != HS_PAGES_NONE;
		     s = hs_pg.meta[s].a) {
			if (s >= hs_pg.frontier ||
			    hs_pg.meta[s].tag != TAG_FREE_HEAD ||
			    hs_pg.meta[s].kind != k ||
			    bucket_of(hs_pg.meta[s].len) != b ||
			    hs_pg.meta[s].b != prev)
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

	for (uint32_t p = 0; p < hs_pg.frontier;) {
		struct page_meta m = hs_pg.meta[p];

		if (m.tag != TAG_USED && m.tag != TAG_FREE_HEAD)
			return -1; /* not a run start */
		if (m.len == 0 || (uint64_t)p + m.len > hs_pg.frontier)
			return -2;
		if (m.tag == TAG_FREE_HEAD) {
			if (m.kind >= NKINDS || prev_kind == (int)m.kind)
				return -3; /* two adjacent runs of a kind */
			if (m.len > 1 &&
			    (hs_pg.meta[p + m.len - 1].tag != TAG_FREE_TAIL ||
			     hs_pg.meta[p + m.len - 1].len != p ||
			     hs_pg.meta[p + m.len - 1].kind != m.kind))
				return -4;
			free_runs[m.kind]++;
			if (m.kind == WARM)
				warm += m.len;
		} else {
			used += m.len;
		}
		for (uint32_t i = 1; i + 1 < m.len; i++)
			if (hs_pg.meta[p + i].tag != TAG_NONE)
				return -5; /* stale tag inside a run */
		if (m.tag == TAG_USED && m.len > 1 &&
		    hs_pg.meta[p + m.len - 1].tag != TAG_NONE)
			return -5;
		prev_kind = m.tag == TAG_FREE_HEAD ? (int)m.kind : -1;
		p += m.len;
	}
	if (prev_kind == COLD)
		return -6; /* a cold run touches the frontier */
	if (used != hs_pg.in_use || warm != hs_pg.warm_pages)
		return -7;
	for (unsigned k = 0; k < NKINDS; k++)
		if (check_lists(k) != (int64_t)free_runs[k])
			return -8;
	for (uint32_t s = hs_pg.lru_oldest; s != HS_PAGES_NONE;
	     s = hs_pg.meta[s].newer) {
		if (s >= hs_pg.frontier || hs_pg.meta[s].tag != TAG_FREE_HEAD ||
		    hs_pg.meta[s].kind != WARM || hs_pg.meta[s].older != prev)
			return -9;
		prev = s;
		lru++;
	}
	if (prev != hs_pg.lru_newest || lru != free_runs[WARM] ||
	    warm > hs_pages_cache_limit())
		return -10;
	return 0;
}
