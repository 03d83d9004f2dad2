/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling.h - the boundary between the allocator core and the
 * sampling side (sampling/: sampler, samples, registry, stacks, probes;
 * region/: the sampled region its samples and large blocks live in).
 *
 * The core calls exactly these; the sampling side calls the core only
 * through core/core.h (hs_alloc_unsampled & co.).  Grouped by the file
 * that defines them.
 */
#ifndef HS_SAMPLING_H
#define HS_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"

/*
 * Per-thread sampler state.  Lives in the thread's initial-exec TLS
 * (hs_thread, thread_cache.h) whose static initial value has
 * bytes_until_sample == 0, so a thread's first allocation takes the slow
 * path, which seeds the sampler.
 */
typedef struct hs_sampler {
	size_t bytes_until_sample; /* counter; fast path subtracts r + 1 */
	uint64_t rng;              /* PRNG state, 0 = not yet seeded */
	int64_t period;            /* T this counter was drawn with */
	uint64_t epoch;            /* global rate epoch seen at last draw */
} hs_sampler_t;

/* ---- sampler.h: the fast path ---- */

/*
 * Fast path: subtract r + 1 from the counter (TCMalloc's
 * TryRecordAllocationFast).  Returns true when the allocation is NOT
 * sampled (the common case).  On false the counter has wrapped and the
 * caller must call hs_sample_alloc_slow() exactly once for this request.
 */
static inline bool hs_sampler_try_fast(hs_sampler_t *s, size_t requested)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	/* One subtract from memory whose carry is the wrap: the compilers
	 * make __builtin_usubl_overflow a load, a subtract and a store (two
	 * instructions more on every malloc). */
	bool wrapped;
	__asm__("subq %2, %0"
		: "+m"(s->bytes_until_sample), "=@ccc"(wrapped)
		: "r"(requested + 1));
	return HS_LIKELY(!wrapped);
#else
	return HS_LIKELY(!__builtin_usubl_overflow(s->bytes_until_sample,
						   requested + 1,
						   &s->bytes_until_sample));
#endif
}

/* ---- sampling/sample.c ---- */

/*
 * Slow path after hs_sampler_try_fast() returned false.  Decides whether
 * the allocation is sampled (it may not be: first use, rate change,
 * sampling off, re-entrancy), and if it is, allocates it on exclusive
 * pages of the sampled region, records it, unwinds its stack and fires
 * sample_alloc.  Returns the pointer, or NULL when the caller must serve
 * the request unsampled.  align: 0 for the default alignment, else a power
 * of two.  Thread-safe.
 */
void *hs_sample_alloc_slow(hs_sampler_t *s, size_t requested, size_t align);

/*
 * hs_sample_alloc_slow() for realloc growing the live sampled allocation p
 * to `requested` bytes (default alignment).  When the new size is sampled
 * and p's page run has or can get the pages in place, returns p itself,
 * re-recorded as a new sample (sample_free of the old record, then
 * sample_alloc; contents kept).  Otherwise as hs_sample_alloc_slow: a new
 * sampled pointer elsewhere (the caller copies and frees p), or NULL (the
 * caller serves the request unsampled).  Thread-safe.
 */
void *hs_sample_realloc_slow(hs_sampler_t *s, size_t requested, void *p);

/* ---- region/region.c ---- */

/* The sampled region [hs_sampled_start, hs_sampled_start + hs_sampled_size);
 * size is 0 until sampling is initialised. */
extern HS_HIDDEN uintptr_t hs_sampled_start;
extern HS_HIDDEN uintptr_t hs_sampled_size;

/* One compare: is p inside the sampled region? */
static inline bool hs_is_sampled(const void *p)
{
	return HS_UNLIKELY((uintptr_t)p - hs_sampled_start < hs_sampled_size);
}

/* ---- sampling/sampled_free.c ---- */

/*
 * Free a sampled pointer (hs_is_sampled(p) is true).  size_hint is the
 * size given to free_sized / sized delete, 0 when unknown.  Fires
 * sample_free before the pages can be reused.  Invalid or double frees are
 * reported once on stderr and ignored.  Thread-safe.
 */
void hs_sampled_free(void *p, size_t size_hint);

/* Usable size of a pointer into the region (a sample's allocated size a,
 * a large unsampled block's whole pages), 0 if invalid. */
size_t hs_sampled_usable_size(const void *p);

/* Grow the block at p (large unsampled, or a sample whose new size was
 * not sampled: its record is released, sample_free fires) in place to n
 * bytes (HS_REGION_GROW_MIN <= n <= HEAPSCOPE_REGION_BLOCK_MAX); false,
 * unchanged, when the pages after it are taken or n is out of that
 * range.  Thread-safe. */
bool hs_region_grow(void *p, size_t n);

/* ---- region/blocks.c: the region's large unsampled blocks ---- */

/* A block of n bytes (HS_MAX_SMALL_SIZE < n <= HEAPSCOPE_REGION_BLOCK_MAX,
 * default 64 MiB, else NULL) on whole pages of the region, with no
 * record and no probe; NULL when the region is not set up or is full
 * (the caller uses the page heap).  Freed by hs_sampled_free like a
 * sample.  Thread-safe. */
void *hs_region_alloc(size_t n);
/* Blocks realloc grows past their size class from this size on are
 * region blocks (hs_region_alloc_growable), which later growth extends
 * in place; a size class would be copied out of at each step. */
#define HS_REGION_GROW_MIN ((size_t)64 << 10)
/* hs_region_alloc for a block realloc grows: also from
 * HS_REGION_GROW_MIN up (NULL below), a whole number of region pages as
 * any region block, which hs_region_grow then extends in place while the
 * pages after it are free.  Python's list and bytes buffers, Ruby's and
 * Lua's strings grow by realloc: each step from one class to the next
 * was a copy (python3 on a 2.6 MB JSON: 21 MB copied in blocks of
 * 64-256 KiB, where glibc's realloc extends in place).  Thread-safe. */
void *hs_region_alloc_growable(size_t n);
/* hs_sampled_free(p, 0) of the old copy of a block realloc moved (p in
 * the region, over HS_MAX_SMALL_SIZE) to q: when q took only fresh pages
 * of the region (no kept run fitted it), p's pages are decommitted, not
 * kept for reuse (region/pages_cache.c).  Thread-safe. */
void hs_region_free_moved(void *p, const void *q);
/* Bytes of never-used or decommitted pages that the calling thread's last
 * block of the region (hs_region_alloc, hs_region_alloc_growable,
 * hs_region_grow) took: what it adds to the footprint once touched; 0
 * when kept pages served it.  Thread-safe (per thread). */
size_t hs_region_fresh_bytes(void);
/* false when p does not start a block of the region; else true, and
 * *off, *len (bytes from p) the part that may hold old data (calloc
 * clears only that; *len 0: all of it reads as zeros).  Thread-safe. */
bool hs_region_dirty(const void *p, size_t *off, size_t *len);

/* ---- sampling/sampling.c ---- */

/* Decommit the sampled pages kept committed for reuse (malloc_trim).
 * Returns the bytes released.  Thread-safe. */
size_t hs_sampled_trim(void);

/* Called once by the allocator's init, after options are parsed. */
void hs_sampling_init(void);

/* pthread_atfork handlers of the sampling side. */
void hs_sampling_fork_prepare(void);
void hs_sampling_fork_parent(void);
void hs_sampling_fork_child(void);

#endif /* HS_SAMPLING_H */
