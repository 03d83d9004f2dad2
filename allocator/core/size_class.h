/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/size_class.h - size classes: the map from a request size to a
 * class, and per-class geometry (object size, pages per span, batch size).
 *
 * Class 0 is "no class" (large spans); classes 1..HS_NUM_CLASSES-1 are
 * the small classes, 16 B to HS_MAX_SMALL_SIZE, every size a multiple of
 * 16, at most 16 bytes of internal waste up to 512, 12.5 % above.
 */
#ifndef HS_SIZE_CLASS_H
#define HS_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"

#define HS_NUM_CLASSES 121
/* hs_size_class_init's scheme: class 0; 32 classes of 16..512 bytes, 16
 * of 544..1024, 8 of 1152..2048, 24 of 2304..8192, then 8 per power of
 * two up to HS_MAX_SMALL_SIZE (a power of two); classes are stored in
 * uint8_t (hs_span_t.size_class) and published in the stats block
 * (HEAPSCOPE_STATS_MAX_CLASSES). */
_Static_assert((HS_MAX_SMALL_SIZE & (HS_MAX_SMALL_SIZE - 1)) == 0 &&
		       HS_MAX_SMALL_SIZE >= 8192,
	       "HS_MAX_SMALL_SIZE: a power of two of at least 8 KiB");
_Static_assert(HS_NUM_CLASSES ==
		       1 + 32 + 16 + 8 + 24 +
			       8 * (__builtin_ctzll(HS_MAX_SMALL_SIZE) - 13),
	       "HS_NUM_CLASSES does not match the classes up to "
	       "HS_MAX_SMALL_SIZE");
_Static_assert(HS_NUM_CLASSES <= 256, "a size class fits in uint8_t");
/* Index of the lookup table: 16-byte steps up to HS_CLASS_FINE_MAX, then
 * 128-byte. */
#define HS_CLASS_FINE_MAX 1024
#define HS_CLASS_INDEX_MAX ((HS_MAX_SMALL_SIZE + 127 + (120 << 7)) >> 7)
/* The table holds class << HS_CLASS_TABLE_SHIFT: the byte offset of the
 * class's list in a thread cache (thread_cache.h pins the layout), so
 * the malloc fast path has the list's address with no multiply. */
#define HS_CLASS_TABLE_SHIFT 4

typedef struct hs_class_info {
	uint32_t size;	     /* object size in bytes */
	uint16_t pages;	     /* heapscope pages per span */
	uint16_t batch;	     /* objects per transfer thread cache <-> central */
	uint32_t max_cached; /* thread cache list length limit */
	uint32_t objects;    /* objects per span */
} hs_class_info_t;

extern uint16_t hs_class_table[HS_CLASS_INDEX_MAX + 1];
extern hs_class_info_t hs_classes[HS_NUM_CLASSES];

/* Table index of a size <= HS_CLASS_FINE_MAX (malloc's fast path tests
 * that bound itself, first). */
static inline size_t hs_class_fine_index(size_t n)
{
	return (n + 15) >> 4;
}

/* Table index of a size <= HS_MAX_SMALL_SIZE. */
static inline size_t hs_class_index(size_t n)
{
	return n <= HS_CLASS_FINE_MAX ? hs_class_fine_index(n)
				      : (n + 127 + (120 << 7)) >> 7;
}

/* Class of a size <= HS_MAX_SMALL_SIZE; 0 before hs_size_class_init(). */
static inline unsigned hs_size_to_class(size_t n)
{
	return hs_class_table[hs_class_index(n)] >> HS_CLASS_TABLE_SHIFT;
}

/* Builds the classes and the lookup table.  Called once from the global
 * init under the init lock; not thread-safe by itself. */
void hs_size_class_init(void);

/* Smallest class whose size is >= n and a multiple of align (align a
 * power of two <= HS_PAGE_SIZE); 0 when none.  Needs init. */
unsigned hs_size_class_aligned(size_t n, size_t align);

/* Checker for tests: 1 when tables are consistent, 0 otherwise. */
int hs_size_class_is_valid(void);

#endif /* HS_SIZE_CLASS_H */
