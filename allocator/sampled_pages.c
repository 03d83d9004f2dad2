// SPDX-License-Identifier: MIT
/*
 * allocator/sampled_pages.c - runs of 8 KiB pages inside the sampled
 * region.
 *
 * Pages below `frontier` belong to runs that are either in use (one per
 * live sample) or free; pages from `frontier` on were never handed out
 * (or came back and were merged into the frontier).  Free runs are kept
 * maximally coalesced and never touch the frontier.  They sit in
 * size-bucketed doubly linked lists: one bucket per length for 1..128
 * pages, one per power of two above, with a bitmap of non-empty buckets,
 * so allocation is a bitmap search plus (for long runs) a bounded scan of
 * one bucket, and free is O(1) with boundary tags.
 *
 * All metadata is in a side array (one 16-byte entry per region page,
 * MAP_NORESERVE, touched lazily), never in the pages themselves: free runs
 * are decommitted and stay so.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "sampled.h"

enum { TAG_NONE = 0, TAG_USED, TAG_FREE_HEAD, TAG_FREE_TAIL };

/*
 * TAG_USED:      len = pages, a = registry slot
 * TAG_FREE_HEAD: len = pages, a = next, b = prev in its bucket list
 * TAG_FREE_TAIL: len = index of the run's head page (runs of 2+ pages)
 * TAG_NONE:      interior page, or beyond the frontier
 */
struct page_meta {
	uint32_t tag, len, a, b;
};

#define NEXACT 128
#define NBUCKETS (NEXACT + 26)
#define NWORDS ((NBUCKETS + 63) / 64)
#define SCAN_LIMIT 32

static uintptr_t base;
static uint32_t npages, frontier;
static struct page_meta *meta;
static uint32_t bucket_head[NBUCKETS];
static uint64_t bitmap[NWORDS];
static uint64_t in_use;

int hs_pages_init(uintptr_t region, uint32_t pages)
{
	size_t bytes = ((size_t)pages * sizeof(struct page_meta) + 0xFFFF) &
		       ~(size_t)0xFFFF;

	meta = hs_os_reserve(bytes, 1 << 16);
	if (!meta)
		return -ENOMEM;
	for (int i = 0; i < NBUCKETS; i++)
		bucket_head[i] = HS_PAGES_NONE;
	base = region;
	npages = pages;
	frontier = 0;
	return 0;
}

static unsigned bucket_of(uint32_t len)
{
	if (len <= NEXACT)
		return len - 1;
	return NEXACT + (31 - __builtin_clz(len)) - 7;
}

static void list_push(uint32_t s)
{
	unsigned b = bucket_of(meta[s].len);
	uint32_t h = bucket_head[b];

	meta[s].a = h;
	meta[s].b = HS_PAGES_NONE;
	if (h != HS_PAGES_NONE)
		meta[h].b = s;
	bucket_head[b] = s;
	bitmap[b / 64] |= (uint64_t)1 << (b % 64);
}

static void list_remove(uint32_t s)
{
	unsigned b = bucket_of(meta[s].len);
	uint32_t next = meta[s].a, prev = meta[s].b;

	if (prev != HS_PAGES_NONE)
		meta[prev].a = next;
	else
		bucket_head[b] = next;
	if (next != HS_PAGES_NONE)
		meta[next].b = prev;
	if (bucket_head[b] == HS_PAGES_NONE)
		bitmap[b / 64] &= ~((uint64_t)1 << (b % 64));
}

static void make_free(uint32_t s, uint32_t len)
{
	meta[s] = (struct page_meta){ TAG_FREE_HEAD, len, 0, 0 };
	if (len > 1)
		meta[s + len - 1] = (struct page_meta){ TAG_FREE_TAIL, s, 0, 0 };
	list_push(s);
}

/* Take a free run out of its list and clear its tags; returns its length. */
static uint32_t unmake_free(uint32_t s)
{
	uint32_t len = meta[s].len;

	list_remove(s);
	if (len > 1)
		meta[s + len - 1] = (struct page_meta){ 0 };
	meta[s] = (struct page_meta){ 0 };
	return len;
}

/* First non-empty bucket >= b, or NBUCKETS. */
static unsigned next_bucket(unsigned b)
{
	for (unsigned w = b / 64; w < NWORDS; w++) {
		uint64_t bits = bitmap[w];

		if (w == b / 64)
			bits &= ~(uint64_t)0 << (b % 64);
		if (bits)
			return w * 64 + (unsigned)__builtin_ctzll(bits);
	}
	return NBUCKETS;
}

/* A free run of at least need pages, taken out of the lists; *len gets
 * its length. */
static uint32_t find_free(uint32_t need, uint32_t *len)
{
	unsigned b = bucket_of(need);
	uint32_t s;

	if (b >= NEXACT) {
		s = bucket_head[b];
		/* a log bucket holds [2^j, 2^(j+1)): look for a fit */
		for (int i = 0; s != HS_PAGES_NONE && i < SCAN_LIMIT; i++) {
			if (meta[s].len >= need)
				goto found;
			s = meta[s].a;
		}
		b++;
	}
	b = next_bucket(b);
	if (b >= NBUCKETS)
		return HS_PAGES_NONE;
	s = bucket_head[b];
found:
	*len = unmake_free(s);
	return s;
}

uint32_t hs_pages_alloc(uint32_t n, uint32_t align_pages, uint32_t slot)
{
	uint64_t need = (uint64_t)n + align_pages - 1;
	uint32_t s, len, a;

	if (n == 0 || align_pages == 0 || need > npages)
		return HS_PAGES_NONE;
	s = find_free((uint32_t)need, &len);
	if (s != HS_PAGES_NONE) {
		a = (s + align_pages - 1) & ~(align_pages - 1);
		if (a > s)
			make_free(s, a - s);
		if (s + len > a + n)
			make_free(a + n, s + len - (a + n));
	} else {
		a = (frontier + align_pages - 1) & ~(align_pages - 1);
		if ((uint64_t)a + n > npages)
			return HS_PAGES_NONE;
		if (a > frontier)
			make_free(frontier, a - frontier);
		frontier = a + n;
	}
	meta[a] = (struct page_meta){ TAG_USED, n, slot, 0 };
	in_use += n;
	return a;
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

void hs_pages_free(uint32_t page)
{
	uint32_t n = meta[page].len, s = page, len = n, h = HS_PAGES_NONE;

	meta[page] = (struct page_meta){ 0 };
	in_use -= n;
	/* MADV_DONTNEED never splits the region's single VMA */
	hs_os_decommit((void *)(base + ((uintptr_t)page << HS_PAGE_SHIFT)),
		       (size_t)n << HS_PAGE_SHIFT);
	if (s > 0) {
		if (meta[s - 1].tag == TAG_FREE_TAIL)
			h = meta[s - 1].len;
		else if (meta[s - 1].tag == TAG_FREE_HEAD)
			h = s - 1; /* a one-page run */
	}
	if (h != HS_PAGES_NONE) {
		len += unmake_free(h);
		s = h;
	}
	if (page + n == frontier) {
		frontier = s;
		return;
	}
	if (meta[page + n].tag == TAG_FREE_HEAD)
		len += unmake_free(page + n);
	make_free(s, len);
}

uint64_t hs_pages_in_use(void)
{
	return in_use;
}

int hs_pages_is_valid(void)
{
	uint64_t used = 0, free_runs = 0, listed = 0;
	int prev_free = 0;

	for (uint32_t p = 0; p < frontier;) {
		struct page_meta m = meta[p];

		if (m.tag != TAG_USED && m.tag != TAG_FREE_HEAD)
			return -1; /* not a run start */
		if (m.len == 0 || (uint64_t)p + m.len > frontier)
			return -2;
		if (m.tag == TAG_FREE_HEAD) {
			if (prev_free)
				return -3; /* two adjacent free runs */
			if (m.len > 1 && (meta[p + m.len - 1].tag != TAG_FREE_TAIL ||
					  meta[p + m.len - 1].len != p))
				return -4;
			free_runs++;
		} else {
			used += m.len;
		}
		for (uint32_t i = 1; i + 1 < m.len; i++)
			if (meta[p + i].tag != TAG_NONE)
				return -5; /* stale tag inside a run */
		if (m.tag == TAG_USED && m.len > 1 &&
		    meta[p + m.len - 1].tag != TAG_NONE)
			return -5;
		prev_free = m.tag == TAG_FREE_HEAD;
		p += m.len;
	}
	if (prev_free)
		return -6; /* a free run touches the frontier */
	if (used != in_use)
		return -7;
	for (unsigned b = 0; b < NBUCKETS; b++) {
		uint32_t prev = HS_PAGES_NONE;
		int bit = !!(bitmap[b / 64] & ((uint64_t)1 << (b % 64)));

		if (bit != (bucket_head[b] != HS_PAGES_NONE))
			return -8;
		for (uint32_t s = bucket_head[b]; s != HS_PAGES_NONE; s = meta[s].a) {
			if (meta[s].tag != TAG_FREE_HEAD || bucket_of(meta[s].len) != b ||
			    meta[s].b != prev)
				return -9;
			prev = s;
			listed++;
		}
	}
	return listed == free_runs ? 0 : -10;
}
