/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/size_class.c - builds the size classes and the size -> class
 * lookup table (TCMalloc's ClassIndex scheme: 16-byte granularity up to
 * 1 KiB, 128-byte above).
 *
 * Classes: 16..128 in steps of 16, then 8 classes per power of two
 * (step = base / 8) up to 256 KiB: 8 + 11 * 8 = 96 classes.
 */
#include "base/assert.h"
#include "base/log.h"
#include "base/stats.h"
#include "core/size_class.h"

uint8_t hs_class_table[HS_CLASS_INDEX_MAX + 1];
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

static void set_class(unsigned c, size_t size)
{
	hs_class_info_t *ci = &hs_classes[c];
	size_t pages = (size + HS_PAGE_SIZE - 1) / HS_PAGE_SIZE;
	for (;; pages++) {
		size_t span = pages * HS_PAGE_SIZE;
		/* at most 1/8 of the span wasted at its end */
		if ((span % size) * 8 <= span)
			break;
	}
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
	unsigned c = 1;
	for (size_t s = 16; s <= 128; s += 16)
		set_class(c++, s);
	for (size_t base = 128; base < HS_MAX_SMALL_SIZE; base *= 2)
		for (size_t s = base + base / 8; s <= 2 * base; s += base / 8)
			set_class(c++, s);
	if (c != HS_NUM_CLASSES) {
		hs_log("heapscope: internal error: %u size classes", c);
		__builtin_trap();
	}
	/* table entry i covers sizes up to the largest size mapping to i */
	unsigned cls = 1;
	for (size_t i = 0; i <= HS_CLASS_INDEX_MAX; i++) {
		if (i > 64 && i < 129) {
			/* unused: hs_class_index(1025) is already 129 */
			hs_class_table[i] = (uint8_t)cls;
			continue;
		}
		size_t max = i <= 64 ? i * 16 : (i - 120) * 128;
		if (max < 16)
			max = 16;
		while (cls + 1 < HS_NUM_CLASSES && hs_classes[cls].size < max)
			cls++;
		hs_class_table[i] = (uint8_t)cls;
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
	for (size_t n = 0; n <= HS_MAX_SMALL_SIZE; n++) {
		unsigned c = hs_size_to_class(n);
		if (c == 0 || hs_classes[c].size < n)
			return 0;
		if (c > 1 && hs_classes[c - 1].size >= n && n > 0)
			return 0; /* not the smallest fitting class */
	}
	return 1;
}
