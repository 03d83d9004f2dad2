/* SPDX-License-Identifier: MIT */
/*
 * heapscope/abi.h - the stable ABI between libheapscope.so and collectors.
 *
 * Two parts, both versioned:
 *
 *  1. USDT probes, provider "heapscope" (sys/sdt.h, with semaphores).  All
 *     arguments are 64-bit unsigned unless noted; sizes are in bytes.
 *
 *     sample_alloc(ptr, requested, allocated, alignment, weight,
 *                  stack, depth, seq)
 *        ptr        address returned to the caller
 *        requested  r, the size the caller asked for
 *        allocated  a, the size the allocator reserved for it (size-class
 *                   size for small requests, page-rounded for large ones)
 *        alignment  requested alignment, 0 for the default (16)
 *        weight     W = T + k - f (DESIGN.md section 1): bytes, counted in
 *                   units of (requested + 1); estimated objects = W/(r+1),
 *                   estimated bytes = a*W/(r+1)
 *        stack      address of a uint64_t[depth] array of return addresses,
 *                   innermost (the caller of malloc) first; valid only
 *                   while the probe fires
 *        depth      number of frames in stack (u32, <= HEAPSCOPE_MAX_FRAMES)
 *        seq        per-process sequence number of this event; it is also
 *                   the record id that the matching sample_free carries
 *
 *     sample_free(ptr, requested, allocated, alloc_seq, stack, depth, seq)
 *        fires before the memory can be handed out again, so a collector
 *        never sees the next owner's sample_alloc of the same address first.
 *        alloc_seq  seq of the sample_alloc that created the object
 *        stack/depth the call stack of the free (for lifetime profiles)
 *        seq        this event's own sequence number
 *
 *     rate_change(new_period, old_period)   (signed 64-bit bytes)
 *
 *     mismatched_free(ptr, given_size, requested, allocated, alloc_seq)
 *        (added in registry version 1 without a layout change: additive)
 *        a sized free (free_sized, free_aligned_sized, sized operator
 *        delete) of a sampled allocation whose size does not fit it, i.e.
 *        not requested <= given_size <= allocated (TCMalloc's rule).  Fires
 *        for every such free, after the object was freed correctly (the
 *        given size is ignored; the heap is not affected).  given_size 0
 *        means "no size" and is never reported.  alloc_seq is the seq of
 *        the object's sample_alloc (the record id).
 *
 *     Sequence numbers start at 1 and increase by 1 for every sample_alloc
 *     and sample_free of the process, so a gap means a lost event.
 *
 *     Compatible probes.  Besides its own, the library fires the probe pair
 *     of two other heap-sampling designs, so that their collectors read
 *     heapscope's samples (and heapscope's collector reads other
 *     allocators that fire them, `heapscope record --provider`):
 *
 *       otel_memory:alloc(ptr, size, weight)   otel_memory:free(ptr)
 *       ddheap:alloc(ptr, size, weight)        ddheap:free(ptr)
 *
 *        ptr     the user-visible pointer (u64)
 *        size    bytes the caller requested, r (u64)
 *        weight  the sample's unbiased weight in bytes: the value a
 *                collector adds to alloc_space / inuse_space for it (u64).
 *                heapscope fires round(r * W / (r + 1)), the estimated
 *                requested bytes this sample stands for (W as in
 *                sample_alloc); estimated objects = weight / r.
 *        free    fires only for sampled pointers, before the memory can be
 *                reused (as sample_free).
 *
 *     Each probe has its own semaphore (symbols otel_memory_alloc_semaphore,
 *     otel_memory_free_semaphore, ddheap_alloc_semaphore,
 *     ddheap_free_semaphore; the note carries its address).  The arguments
 *     are in the first three argument registers of the platform's calling
 *     convention (x86-64: rdi, rsi, rdx; arm64: x0, x1, x2) at the probe
 *     site, and the notes describe them so ("8@%rdi 8@%rsi 8@%rdx").
 *
 *     Sources (read 2026): OpenTelemetry eBPF profiler, design doc
 *     design-docs/00003-memory-profiling/README.md ("USDT contract":
 *     otel_memory:alloc(user, size, w), user = user-visible pointer, size =
 *     bytes, w = unbiased weight = nsamples * sampling_interval, used
 *     directly as alloc_space; otel_memory:free(ptr) for previously sampled
 *     pointers; no version field, a changed signature would get _v2 names);
 *     its probe (probes/heap, support/ebpf heap programs) attaches with the
 *     note's semaphore offset but reads the arguments from di/si/dx
 *     (regs[0..2] on arm64), "per-arg location descriptors ... follow-up
 *     work" - hence the pinned registers.  DataDog libdatadog,
 *     libdd-profiling-heap-sampler (README, include/datadog/heap/probes.h,
 *     src/probes.c): ddheap:alloc(void *user, uint64_t size, uint64_t
 *     weight), size = the application-requested bytes, weight =
 *     nsamples * interval; ddheap:free(void *ptr), only with live-heap
 *     tracking; alloc has a semaphore, free has none there.  Neither
 *     design states whether size is requested or usable bytes beyond
 *     DataDog's "user_size"; heapscope follows DataDog (requested).
 *
 *  2. The registry of live sampled allocations: struct heapscope_registry,
 *     reachable through the exported symbol `heapscope_registry`, so a
 *     collector that attaches late can read the live set with
 *     process_vm_readv.  See the struct comments for the consistency rules.
 *
 *  3. The allocator's statistics: struct heapscope_stats_block, the
 *     exported symbol `heapscope_stats` (version 1), read from outside
 *     for `heapscope rss` (where a process's RSS went).
 *
 * Every struct here has fixed-width fields, explicit padding, and its size
 * pinned with HEAPSCOPE_STATIC_ASSERT.  The header compiles as C99, C11,
 * C++11, C++17 and C++20 (test: headers_c_cxx).  A collector must validate
 * every value it reads from a target: the target is not trusted.
 */
#ifndef HEAPSCOPE_ABI_H
#define HEAPSCOPE_ABI_H

#include <stdint.h>

/*
 * HEAPSCOPE_STATIC_ASSERT(cond, tag): fails the build when the constant
 * expression cond is false; usable at file scope in every language the
 * header supports: static_assert in C++11 and later, _Static_assert in
 * C11 and later, else (C99, C++98) a typedef of a char array whose size
 * is -1 when cond is false.  tag: an identifier, unique among this
 * header's assertions (it names the fallback's typedef and is the
 * message).
 */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define HEAPSCOPE_STATIC_ASSERT(cond, tag) static_assert(cond, #tag)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && \
	__STDC_VERSION__ >= 201112L
#define HEAPSCOPE_STATIC_ASSERT(cond, tag) _Static_assert(cond, #tag)
#else
#define HEAPSCOPE_STATIC_ASSERT(cond, tag) \
	typedef char heapscope_static_assert_##tag[(cond) ? 1 : -1]
#endif

#define HEAPSCOPE_PROVIDER "heapscope"
/* Providers of the compatible probes (see above). */
#define HEAPSCOPE_COMPAT_OTEL "otel_memory"
#define HEAPSCOPE_COMPAT_DDHEAP "ddheap"
#define HEAPSCOPE_MAX_FRAMES 64
/* The most registry slots a library reserves (capacity); a collector
 * rejects a header that claims more. */
#define HEAPSCOPE_REGISTRY_MAX_CAPACITY (1ull << 22)

/* "HSREGIS1" little endian */
#define HEAPSCOPE_REGISTRY_MAGIC 0x3153494745525348ULL
#define HEAPSCOPE_REGISTRY_VERSION 1u
#define HEAPSCOPE_REGISTRY_SYMBOL "heapscope_registry"

/*
 * One live sampled allocation.  A slot is free when seq == 0.  Writers
 * fill every field and store seq last (release); on free they clear seq
 * first.  Readers must take the registry's generation seqlock (below).
 */
struct heapscope_record {
	uint64_t seq;        /* record id (= seq of its sample_alloc); 0 = free */
	uint64_t ptr;        /* address returned to the caller */
	uint64_t requested;  /* r, bytes */
	uint64_t allocated;  /* a, bytes */
	uint64_t alignment;  /* bytes, 0 = default */
	uint64_t weight;     /* W, bytes (see sample_alloc) */
	uint64_t time_ns;    /* CLOCK_MONOTONIC of the allocation, ns */
	uint64_t proxy;      /* proxy object in a normal span, or 0 */
	uint64_t span_start; /* first byte of the pages this sample owns */
	uint64_t span_bytes; /* bytes of those pages (multiple of 8 KiB) */
	uint32_t tid;        /* allocating thread (kernel tid) */
	uint32_t depth;      /* frames used in stack[] */
	uint64_t stack[HEAPSCOPE_MAX_FRAMES]; /* return addresses, innermost first */
};
HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_record) == 600, record_abi);

/*
 * Registry header (the exported symbol).  Records live in an array of
 * `capacity` slots at address `records`; only slots below `high_water`
 * can be in use.  `generation` is a seqlock: it is odd while a writer is
 * changing any record or field, and increases by 2 for every change.  A
 * reader reads generation (even), copies what it needs, reads generation
 * again, and retries if it changed.
 */
struct heapscope_registry {
	uint64_t magic;        /* HEAPSCOPE_REGISTRY_MAGIC */
	uint32_t version;      /* HEAPSCOPE_REGISTRY_VERSION */
	uint32_t header_size;  /* sizeof(struct heapscope_registry) */
	uint32_t record_size;  /* sizeof(struct heapscope_record) */
	uint32_t max_frames;   /* HEAPSCOPE_MAX_FRAMES */
	uint64_t generation;   /* seqlock, see above */
	uint64_t records;      /* address of the record array */
	uint64_t capacity;     /* slots reserved at `records` */
	uint64_t high_water;   /* slots [0, high_water) may be live */
	uint64_t live;         /* live records */
	uint64_t next_seq;     /* next sequence number to hand out */
	int64_t sample_period; /* current sampling period T, bytes (<= 0: off) */
	int64_t control_period; /* written by a collector: requested period,
				 * 0 = none, < 0 = sampling off; the library
				 * applies it (and resets it to 0) at a thread's
				 * next sampler slow path, i.e. within one
				 * sampling interval or 128 MiB if off */
	uint64_t region_start; /* the sampled region [start, start + size) */
	uint64_t region_size;  /* bytes */
	uint64_t sampled_bytes; /* bytes of pages held by live samples */
	uint64_t ext_records;	/* address of struct heapscope_record_ext
				 * [capacity], parallel to records (slot i
				 * extends record i); 0 = none (older
				 * libraries: this was reserved, zero) */
	uint32_t ext_size;	/* sizeof(struct heapscope_record_ext) */
	uint32_t reserved32;
	uint64_t cached_bytes;	/* freed pages of the sampled region the
				 * library keeps committed for reuse by
				 * later samples and by the large unsampled
				 * blocks it also places there (so only
				 * partly a cost of sampling);
				 * 0 in older libraries (was reserved) */
	uint64_t reserved[1];
};
HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_registry) == 144, registry_abi);

/*
 * Record extension: the span of a small sample's proxy object, for
 * fragmentation profiles.  Filled when the sample is taken and refreshed
 * by the library (round robin, a few slots per sampled alloc/free, and
 * all of them by heapscope_fragmentation_refresh()), so it may be stale
 * by up to updated_ns.  Valid only when ext.seq equals the record's seq
 * (written last, release); a reader must check that and the bounds.
 */
struct heapscope_record_ext {
	uint64_t seq;		     /* record seq this describes, 0 = none */
	uint64_t proxy_span_start;   /* address of the proxy's span */
	uint64_t proxy_span_bytes;   /* its bytes (multiple of 8 KiB) */
	uint32_t proxy_span_live;    /* objects out of the span (user or
				      * thread caches), proxy included */
	uint32_t proxy_span_objects; /* objects the span holds */
	uint64_t updated_ns;	     /* CLOCK_MONOTONIC of the last fill */
};
HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_record_ext) == 40,
			record_ext_abi);

/*
 * The allocator's statistics, published for readers outside the process
 * (the exported symbol `heapscope_stats`).  The counters in values[] ARE
 * the allocator's own statistics (allocator/base/stats.h keeps them in
 * this array), so publishing costs nothing: no copy, no fast-path work.
 *
 * values[i], i < value_count, is the counter HEAPSCOPE_STAT_<NAME> below
 * (signed 64-bit; bytes unless the name ends in _COUNT or _TOTAL, which
 * count events, or is LIVE, records).  A later library may append
 * counters (value_count grows, version stays); renumbering bumps the
 * version.  Each counter is an independent relaxed atomic, exact at some
 * moment: there is no writer seqlock (the counters change under many
 * locks).  `generation` stays 0 in version 1.  A reader that wants a
 * consistent set copies the block until two successive copies of
 * values[] are equal (bounded retries), else keeps the last copy and says
 * so.  Transient negative values can occur and read as 0.
 *
 * Thread caches hold objects the allocator counts as used until the
 * thread hands them out; the bytes they hold are per-thread values the
 * allocator does not sum (that would cost the fast path).  A reader sums
 * them: the caches form a list from `tcache_head` through the 64-bit
 * address at `tcache_next_offset` of each cache; a cache's list for size
 * class c (1 <= c < class_count) is at tcache_lists_offset + c *
 * tcache_list_size and holds a uint32_t count of objects at
 * tcache_length_offset; each is class_size[c] bytes.  At most
 * tcache_count caches are on the list (caches are never unmapped; an
 * exited thread's cache is empty until another thread reuses it).
 *
 * The block is for readers outside the process.  A program that links
 * the symbol directly gets a copy relocation: a copy made at start-up
 * that the library never updates; in-process readers use
 * heapscope_get_allocator_stats (heapscope.h), or dlsym on the library's
 * handle.
 *
 * Unwinding tables: `unwind_cache_bytes` of static storage the sampler's
 * unwinder caches rules in (touched only once samples are taken): the part
 * in use now, 4 KiB to start with, doubled as it fills, up to 128 KiB.
 *
 * Version 2 (same size and layout; a reader accepts 1 and 2): `heap_map`,
 * formerly reserved[0], is the address of a struct heapscope_heap_map
 * (below) that says where the in-use large blocks are, so a reader can
 * measure which of their pages are resident (/proc/PID/pagemap).  0 in a
 * version-1 block.
 */
#define HEAPSCOPE_STATS_MAGIC 0x3153544154535348ULL /* "HSSTATS1" */
#define HEAPSCOPE_STATS_VERSION 2u
#define HEAPSCOPE_STATS_VERSION_MIN 1u /* the oldest layout readers take */
#define HEAPSCOPE_STATS_SYMBOL "heapscope_stats"
#define HEAPSCOPE_STATS_MAX_VALUES 64
#define HEAPSCOPE_STATS_MAX_CLASSES 128
/* The most thread caches a reader follows. */
#define HEAPSCOPE_STATS_MAX_CACHES (1u << 20)

/* values[] indices, version 1 (their meaning: allocator/base/stats.h). */
enum heapscope_stat_index {
	HEAPSCOPE_STAT_SYSTEM_BYTES = 0,	  /* heap address space */
	HEAPSCOPE_STAT_META_BYTES = 1,	  /* metadata arena, committed */
	HEAPSCOPE_STAT_PAGEHEAP_FREE_BYTES = 2, /* free spans, committed */
	HEAPSCOPE_STAT_PAGEHEAP_RELEASED_BYTES = 3, /* free spans, released */
	HEAPSCOPE_STAT_PAGEHEAP_FREE_COUNT = 4,
	HEAPSCOPE_STAT_SMALL_SPAN_BYTES = 5, /* spans carved into objects */
	HEAPSCOPE_STAT_CENTRAL_FREE_BYTES = 6, /* central lists + transfer
						* caches */
	HEAPSCOPE_STAT_PAGEHEAP_LARGE_BYTES = 7,
	HEAPSCOPE_STAT_PAGEHEAP_LARGE_COUNT = 8,
	HEAPSCOPE_STAT_REGION_LARGE_BYTES = 9,
	HEAPSCOPE_STAT_REGION_LARGE_COUNT = 10,
	HEAPSCOPE_STAT_PAGEHEAP_MERGE_COUNT = 11,
	HEAPSCOPE_STAT_RELEASE_CALLS_COUNT = 12,
	HEAPSCOPE_STAT_RELEASED_TOTAL_BYTES = 13,
	HEAPSCOPE_STAT_FOREIGN_FREE_COUNT = 14,
	HEAPSCOPE_STAT_SPAN_WASTE_BYTES = 15, /* small spans' tails that
					       * hold no object */
	HEAPSCOPE_STAT_SAMPLED_LARGE_BYTES = 16, /* samples without a proxy
						  * (in REGION_LARGE) */
	HEAPSCOPE_STAT_META_USED_BYTES = 17, /* of META_BYTES, handed out
					      * (bump: the touched part) */
	HEAPSCOPE_STAT_SAMPLES_TOTAL = 18,
	HEAPSCOPE_STAT_FREES_TOTAL = 19,
	HEAPSCOPE_STAT_DROPPED_TOTAL = 20,
	HEAPSCOPE_STAT_INVALID_FREES_TOTAL = 21,
	HEAPSCOPE_STAT_LIVE = 22,
	HEAPSCOPE_STAT_PAGES_BYTES = 23,  /* pages held by live samples */
	HEAPSCOPE_STAT_PROXY_BYTES = 24,
	HEAPSCOPE_STAT_RECORD_BYTES = 25, /* registry records touched */
	HEAPSCOPE_STAT_INUSE_ESTIMATE = 26, /* sum a * W / (r + 1) */
	HEAPSCOPE_STAT_FRAGMENTATION_ESTIMATE = 27,
	HEAPSCOPE_STAT_REGION_BYTES = 28,
	HEAPSCOPE_STAT_MISMATCHED_FREES_TOTAL = 29,
	HEAPSCOPE_STAT_CACHED_BYTES = 30, /* freed region pages kept */
	HEAPSCOPE_STAT_RECYCLED_BYTES_TOTAL = 31,
	HEAPSCOPE_STAT_V1_COUNT = 32 /* counters a version-1 block has */
};

struct heapscope_stats_block {
	uint64_t magic;		     /* HEAPSCOPE_STATS_MAGIC */
	uint32_t version;	     /* HEAPSCOPE_STATS_VERSION */
	uint32_t header_size;	     /* sizeof(struct heapscope_stats_block) */
	uint32_t value_count;	     /* values[] in use, <= MAX_VALUES */
	uint32_t class_count;	     /* class_size[] in use, <= MAX_CLASSES */
	uint64_t generation;	     /* 0 in version 1 (see above) */
	uint64_t tcache_head;	     /* address of the first cache, 0: none */
	uint64_t tcache_count;	     /* caches on that list */
	uint32_t tcache_next_offset; /* of the next-cache address in a cache */
	uint32_t tcache_lists_offset;  /* of list 0 in a cache */
	uint32_t tcache_list_size;     /* bytes per list */
	uint32_t tcache_length_offset; /* of the uint32_t count in a list */
	uint64_t unwind_cache_bytes;   /* static unwind rule cache, bytes */
	uint64_t heap_map;	       /* v2: struct heapscope_heap_map's address */
	uint64_t reserved[3];
	int64_t values[HEAPSCOPE_STATS_MAX_VALUES];
	uint32_t class_size[HEAPSCOPE_STATS_MAX_CLASSES]; /* bytes; [0] = 0 */
};
HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_stats_block) == 1128,
			stats_block_abi);

/*
 * Where the in-use large blocks are (stats block version 2, `heap_map`),
 * for a reader outside the process that measures their residency.  Large
 * blocks live in two pools (docs/profiles.md, "Where RSS went"):
 *
 *  - page-heap spans: a list of the in-use large spans from `large_head`
 *    (address of the first span object, 0: none) through the 64-bit
 *    address at `span_next_offset` of each; a span's first page number
 *    (uint64, address >> page_shift) is at `span_start_offset` and its
 *    length in pages (uint64) at `span_npages_offset`.  At most
 *    `large_count` spans are on the list.  The list changes under the
 *    page heap's lock; a reader's copy is racy and must bound its walk.
 *  - the sampled region's runs: an array of `run_entry_size`-byte
 *    entries at `run_meta`, one per page of the region that starts at
 *    `region_base` (`region_pages` pages); the runs are the pages below
 *    the uint32 at `run_frontier_addr`.  An entry that heads a run has
 *    the uint16 tag at `run_tag_offset` equal to `run_tag_used` (a block
 *    in use: a large block or a sample) or `run_tag_free` (a free run),
 *    and the run's length in pages, uint32, at `run_len_offset`; other
 *    entries are interior.  Samples whose pages hold a proxy object are
 *    among the used runs (the registry's records name them).
 *
 * Addresses are the target's; everything is racy and must be validated.
 * Page size: 1 << page_shift bytes (8 KiB).
 */
#define HEAPSCOPE_HEAP_MAP_MAGIC 0x314d504145485348ULL /* "HSHEAPM1" */
#define HEAPSCOPE_HEAP_MAP_VERSION 1u

struct heapscope_heap_map {
	uint64_t magic;		     /* HEAPSCOPE_HEAP_MAP_MAGIC */
	uint32_t version;	     /* HEAPSCOPE_HEAP_MAP_VERSION */
	uint32_t size;		     /* sizeof(struct heapscope_heap_map) */
	uint64_t large_head;	     /* first in-use large span, 0: none */
	uint64_t large_count;	     /* spans on that list */
	uint32_t span_start_offset;  /* uint64 first page number */
	uint32_t span_npages_offset; /* uint64 pages */
	uint32_t span_next_offset;   /* uint64 next span's address */
	uint32_t page_shift;	     /* log2 of the page size (13) */
	uint64_t region_base;	     /* the region's first byte, 0: none */
	uint64_t run_meta;	     /* the run entries' array */
	uint64_t run_frontier_addr;  /* uint32: runs are pages below it */
	uint32_t region_pages;	     /* entries in the array */
	uint32_t run_entry_size;     /* bytes per entry */
	uint32_t run_tag_offset;     /* uint16 tag */
	uint32_t run_len_offset;     /* uint32 pages of the run */
	uint16_t run_tag_used;	     /* tag of a run in use */
	uint16_t run_tag_free;	     /* tag of a free run's head */
	uint32_t reserved;
};
HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_heap_map) == 96,
			heap_map_abi);

#endif /* HEAPSCOPE_ABI_H */
