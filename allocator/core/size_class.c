/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/size_class.c - builds the size classes and the size -> class
 * lookup table (TCMalloc's ClassIndex scheme: 16-byte granularity up to
 * 1 KiB, 128-byte above).
 *
 * Classes (120): 16..512 in steps of 16, 512..1024 in steps of 32,
 * 1 KiB..2 KiB in steps of 128, 2..8 KiB in steps of 256, then 8 per
 * power of two (step = base / 8) up to 256 KiB.  Why denser than 8 per
 * power of two below 1 KiB and from 4 to 8 KiB: see hs_size_class_init.
 */
#include "base/assert.h"
#include "base/log.h"
#include "base/stats.h"
#include "core/size_class.h"

_Static_assert(HS_NUM_CLASSES <= HEAPSCOPE_STATS_MAX_CLASSES,
	       "every class size fits the stats block");

uint16_t hs_class_table[HS_CLASS_INDEX_MAX + 1];
hs_class_info_t hs_classes[HS_NUM_CLASSES];

/* Bytes of one transfer (thread cache <-> central list) and of one class's
 * thread-cache list, before the clamps in set_class (a batch 2 to 32
 * objects, a list at most 2 batches): TCMalloc's 64 KiB and 256 KiB up
 * to 1 KiB, 16 KiB above.  With 64 KiB everywhere, each class over 1 KiB
 * a thread had used kept up to 2 batches of 64 KiB, linked (written)
 * object by object, so resident: espresso (mimalloc-bench), one thread
 * going through ~70 classes with 0.2-0.4 MiB in use, cached 2.2 MiB in
 * its thread cache, peak RSS 4.4 MiB against glibc's 2.3; with 16 KiB
 * above 1 KiB, 4.0 MiB (16 KiB above 512 bytes: 3.85 MiB, but larsonN-
 * sized, 2 threads, sizes up to 1000 bytes freed by the other thread,
 * went from 19-21 to 22-24 MiB).  An object over 1 KiB costs more to
 * fill than a central-list trip per 16 KiB does (espresso, cfrac:
 * instructions +0.15 %, +0.0 %). */
#define BIG_CLASS 1024
#define BATCH_BYTES(size) ((size) > BIG_CLASS ? 16384 : 65536)
#define LIST_BYTES(size) ((size) > BIG_CLASS ? 16384 : 262144)

static size_t clamp(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Pages per span of class size: the fewest, from the fewest that hold
 * one object up to SPAN_PAGES_MAX, that leave at most 1/TAIL_DEN of the
 * span unused at its end, else of those the one that leaves the least.
 * A span's objects are carved on demand (central_freelist.c), so a
 * longer span costs address space and a page-heap run, not resident
 * pages.  TCMalloc's rule, the fewest with at most 1/8 unused, kept
 * 1/12 of every 11264-byte span idle (3 pages, 2 objects): gawk's
 * 11200-byte blocks (its NODE pools: 100 nodes of 112 bytes), 150 MiB
 * of them, cost 12.5 MiB of span tails, and jq's 832-byte class 8.6 %
 * (4.5 MiB); tails were ~16 MiB of gawk's 14 MiB excess over glibc's
 * peak RSS (a counting shim's histogram of the live requests at peak,
 * classes applied to it).  Measured (median peak RSS of 5 runs): gawk
 * 229.2 -> 212.8 MiB, jq 200.0 -> 194.3; git's repack (two threads
 * freeing 4-64 KiB delta buffers) 23.8 -> 24.5, more free objects left
 * in the longer spans.  1/32 or 8 pages kept 7-page 11200-byte spans
 * (1.8 % tail): gawk 215.6. */
#define TAIL_DEN 64
#define SPAN_PAGES_MAX 16

/* A class of at most SMALL_SPAN_SIZE bytes gets at least
 * SMALL_SPAN_PAGES pages (64 KiB, mimalloc's small page): a span's trip
 * through the page heap costs ~700 instructions both ways (pagemap,
 * coalescing, lists), ~11 an object of a 1-page 128-byte span, and the
 * node-heavy programs take thousands (xmllint at inputs scale 0.1: 2,359
 * spans, allocator instructions 11.32 -> 9.51 M, mimalloc 9.60; xsltproc
 * 58.98 -> 55.09 M, mimalloc 57.51).  Objects are carved on demand, so
 * the longer span costs address space more than resident pages: peak RSS
 * of the real programs within 0.2 %, except git's (repack, two threads)
 * +0.5 to +0.9 %, ~150 KiB; 4 pages up to 1 KiB: jq +0.5 % (bench/README.md,
 * "Page heap figures"). */
#define SMALL_SPAN_SIZE 128
#define SMALL_SPAN_PAGES 8

static size_t span_pages(size_t size)
{
	size_t first = (size + HS_PAGE_SIZE - 1) / HS_PAGE_SIZE;
	if (size <= SMALL_SPAN_SIZE)
		first = SMALL_SPAN_PAGES;
	size_t last = first > SPAN_PAGES_MAX ? first : SPAN_PAGES_MAX;
	size_t best = first, best_tail = SIZE_MAX, best_span = 1;
	for (size_t pages = first; pages <= last; pages++) {
		size_t span = pages * HS_PAGE_SIZE, tail = span % size;
		if (tail * TAIL_DEN <= span)
			return pages;
		/* tail / span < best_tail / best_span */
		if (best_tail == SIZE_MAX ||
		    tail * best_span < best_tail * span) {
			best = pages;
			best_tail = tail;
			best_span = span;
		}
	}
	return best;
}

static void set_class(unsigned c, size_t size)
{
	hs_class_info_t *ci = &hs_classes[c];
	size_t pages = span_pages(size);
	ci->size = (uint32_t)size;
	hs_stats_publish_class(c, ci->size);
	ci->pages = (uint16_t)pages;
	ci->objects = (uint32_t)(pages * HS_PAGE_SIZE / size);
	ci->batch = (uint16_t)clamp(BATCH_BYTES(size) / size, 2, 32);
	/* before growth (thread_cache.c), a thread keeps at most 2 batches
	 * of a class: 64 objects up to 1 KiB, ~16 KiB above */
	ci->max_cached =
		(uint32_t)clamp(LIST_BYTES(size) / size, 1, 2 * ci->batch);
}

void hs_size_class_init(void)
{
	/* Steps (the class sizes, each range's end included).  With 8
	 * classes per power of two from 128 bytes (TCMalloc's spacing, up
	 * to 12.5 % rounding), the sizes real programs ask for most fell
	 * far above a class: jq's 272, 392 and 776-byte blocks (JSON values,
	 * 150 MiB of them at its peak) took 288, 416 and 832 bytes, 5.5 MiB
	 * more than the classes below (glibc: 288, 400, 784); gawk's
	 * 4800-byte blocks took 5120 (1.7 MiB more).  From a counting shim's
	 * histogram of the live requests at each program's peak RSS
	 * (bench/real_programs.sh programs, docs/allocator.md).  Rounding is
	 * now at most 16 bytes up to 512, 6.25 % to 1 KiB and from 4 to
	 * 8 KiB, 12.5 % elsewhere; 24 more classes cost a thread cache
	 * 24 lists (432 bytes) and the central lists 24 more (untouched
	 * until used). */
	static const struct {
		uint32_t end, step;
	} steps[] = {
		{512, 16}, {1024, 32}, {2048, 128}, {8192, 256},
	};
	unsigned c = 1;
	size_t s = 0;
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++)
		while (s < steps[k].end)
			set_class(c++, s += steps[k].step);
	for (size_t base = 8192; base < HS_MAX_SMALL_SIZE; base *= 2)
		while (s < 2 * base)
			set_class(c++, s += base / 8);
	if (c != HS_NUM_CLASSES) {
		hs_log("heapscope: internal error: %u size classes", c);
		__builtin_trap();
	}
	/* Entry i gets the smallest class holding the largest size mapping
	 * to i.  Class sizes are multiples of the table's step (16 up to
	 * 1 KiB, 128 above), so that largest size is a class's own size at
	 * the class's index: each class takes the entries after the previous
	 * class's, up to its own (the unused 65..128 go to the first class
	 * over 1 KiB).  One pass, one store per entry: a per-entry search
	 * cost every process ~50,000 instructions at start-up. */
	size_t i = 0;
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		size_t last = hs_class_index(hs_classes[c].size);
		uint16_t off = (uint16_t)(c << HS_CLASS_TABLE_SHIFT);
		while (i <= last)
			hs_class_table[i++] = off;
	}
	hs_assert_expensive(hs_size_class_is_valid());
}

unsigned hs_size_class_aligned(size_t n, size_t align)
{
	if (n > HS_MAX_SMALL_SIZE)
		return 0;
	for (unsigned c = hs_size_to_class(n); c && c < HS_NUM_CLASSES; c++)
		if ((hs_classes[c].size & (align - 1)) == 0)
			return c;
	return 0;
}

int hs_size_class_is_valid(void)
{
	for (unsigned c = 1; c < HS_NUM_CLASSES; c++) {
		const hs_class_info_t *ci = &hs_classes[c];
		if (ci->size % HS_MIN_ALIGN || ci->objects < 1 ||
		    ci->batch < 1 || ci->max_cached < 1)
			return 0;
		if (c > 1 && ci->size <= hs_classes[c - 1].size)
			return 0;
	}
	for (size_t i = 0; i <= HS_CLASS_INDEX_MAX; i++)
		if (hs_class_table[i] & ((1u << HS_CLASS_TABLE_SHIFT) - 1))
			return 0; /* not a list offset */
	for (size_t n = 0; n <= HS_MAX_SMALL_SIZE; n++) {
		unsigned c = hs_size_to_class(n);
		if (c == 0 || hs_classes[c].size < n)
			return 0;
		if (c > 1 && hs_classes[c - 1].size >= n && n > 0)
			return 0; /* not the smallest fitting class */
	}
	return 1;
}
