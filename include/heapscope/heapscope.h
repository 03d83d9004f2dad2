/* SPDX-License-Identifier: MIT */
/*
 * heapscope/heapscope.h - in-process API of libheapscope.so.
 *
 * These functions exist only when the program runs on heapscope (preloaded
 * or linked).  A program that may run without it can declare them weak:
 *     #pragma weak heapscope_set_sample_period
 * and test the address before calling.
 *
 * Units are bytes and nanoseconds (CLOCK_MONOTONIC) unless stated.  Every
 * function is thread-safe; none is async-signal-safe unless noted.  The
 * period, statistics and check functions never allocate.  The profile
 * functions (snapshot, sessions, writers) are called by the application,
 * never from inside malloc: they take their arrays straight from mmap (so
 * a snapshot does not perturb the heap it describes) and the writers may
 * call the library's own malloc; none of them allocates while holding the
 * sampled-region lock.  Errors are returned as -errno.
 */
#ifndef HEAPSCOPE_HEAPSCOPE_H
#define HEAPSCOPE_HEAPSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "heapscope/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest sampling period accepted by heapscope_set_sample_period (1 PiB). */
#define HEAPSCOPE_MAX_SAMPLE_PERIOD ((int64_t)1 << 50)

/*
 * The current sampling period T in bytes: on average one sample per T
 * bytes allocated (HEAPSCOPE_SAMPLE_RATE, default 2 MiB).  <= 0 means
 * sampling is off; 1 samples every allocation.  Lock-free.
 */
int64_t heapscope_get_sample_period(void);

/*
 * Set the sampling period to `bytes` (<= 0: off, 1: every allocation).
 * Every thread picks the new period up at its next sampler slow path:
 * at once if it was sampling, within 128 MiB of allocation if sampling
 * was off.  Fires the rate_change(new, old) probe and updates the
 * registry's sample_period.  Returns 0, or -EINVAL when bytes >
 * HEAPSCOPE_MAX_SAMPLE_PERIOD.  Thread-safe; not async-signal-safe (takes
 * the sampled lock).
 */
int heapscope_set_sample_period(int64_t bytes);

/*
 * 1 when a collector (or any USDT tool) has armed the sample_alloc probe,
 * i.e. its USDT semaphore is non-zero; else 0.  Lock-free, async-signal-
 * safe.  The answer may change at any time.
 */
int heapscope_collector_attached(void);

/*
 * What sampling costs this process and what it sees, as counters.
 * Cumulative counters end in _total; the others are current values.
 */
struct heapscope_sampling_stats {
	uint64_t samples_total;      /* sampled allocations taken */
	uint64_t frees_total;        /* sampled allocations freed */
	uint64_t dropped_total;      /* samples chosen but served unsampled
				      * (region/registry full, proxy ENOMEM,
				      * re-entrant call, not initialised) */
	uint64_t invalid_frees_total; /* invalid / double frees in the region */
	uint64_t live;               /* live sampled allocations (= records) */
	uint64_t pages_bytes;        /* bytes of 8 KiB pages held by them */
	uint64_t proxy_bytes;        /* allocated bytes of their proxies */
	uint64_t record_bytes;       /* registry bytes touched (high water) */
	uint64_t inuse_estimate;     /* sum a * W / (r + 1): est. heap bytes */
	uint64_t fragmentation_estimate; /* sum W * (a - r) / (r + 1): est.
					  * internal fragmentation bytes */
	uint64_t region_bytes;       /* size of the sampled region */
	uint64_t mismatched_frees_total; /* sized frees whose size did not
					  * fit a sampled allocation
					  * (requested <= size <= allocated) */
	uint64_t cached_bytes;       /* freed sampled pages kept committed
				      * for reuse (HEAPSCOPE_SAMPLED_CACHE) */
	uint64_t recycled_bytes_total; /* sampled pages handed out again from
					* that cache (resident without being
					* touched by their new owner) */
};

/*
 * Copy the statistics into *out (at most `size` bytes of it, so older
 * callers with a shorter struct keep working).  Returns 0, or -EINVAL
 * when out is NULL.  Values are read without a lock: each is exact, the
 * set is not a snapshot.
 */
int heapscope_get_sampling_stats(struct heapscope_sampling_stats *out,
				 size_t size);

/*
 * Check every invariant of the sampled region's page runs (tests, debug).
 * Returns 0 when valid, else a negative code naming the failed check.
 * O(pages used); takes the sampled lock.
 */
int heapscope_sampled_check(void);


/* ---- profiles ---------------------------------------------------------- */

/*
 * One sampled allocation as the profile functions report it.  The
 * estimates follow DESIGN.md section 1: a sample of requested size r,
 * allocated size a and weight W stands for W / (r + 1) allocations and
 * a * W / (r + 1) allocated bytes.  With sampling period 1, W = r + 1:
 * every estimate is exact.
 */
struct heapscope_sample {
	uint64_t ptr;         /* address returned to the caller */
	uint64_t requested;   /* r, bytes */
	uint64_t allocated;   /* a, bytes (size-class or page-rounded) */
	uint64_t alignment;   /* bytes, 0 = default (16) */
	uint64_t weight;      /* W, bytes in units of (r + 1) */
	double count_estimate;    /* W / (r + 1): allocations it stands for */
	uint64_t bytes_estimate;  /* a * W / (r + 1), rounded down */
	uint64_t requested_estimate; /* r * W / (r + 1), rounded down */
	uint64_t seq;         /* record id (sample_alloc's seq) */
	uint64_t time_ns;     /* when it was allocated */
	uint32_t tid;         /* allocating thread (kernel tid) */
	uint32_t depth;       /* frames used in stack[] */
	uint64_t stack[HEAPSCOPE_MAX_FRAMES]; /* return addresses, innermost
					       * (the caller of malloc) first */
	/* lifetime profiles only (0 elsewhere): */
	uint64_t free_time_ns;    /* when it was freed */
	uint64_t lifetime_ns;     /* free_time_ns - time_ns */
	uint32_t free_tid;        /* freeing thread */
	uint32_t free_depth;      /* frames used in free_stack[] */
	uint32_t same_thread;     /* 1 when tid == free_tid */
	uint32_t reserved;
	uint64_t free_stack[HEAPSCOPE_MAX_FRAMES]; /* stack of the free */
};

enum heapscope_profile_kind {
	HEAPSCOPE_PROFILE_HEAP = 1,     /* live samples at one moment */
	HEAPSCOPE_PROFILE_ALLOCS = 2,   /* samples taken during a session */
	HEAPSCOPE_PROFILE_LIFETIME = 3, /* samples allocated and freed
					 * during a session */
};

/* A profile: an array of samples plus what it covers.  Owned by the
 * caller; release it with heapscope_profile_free(). */
struct heapscope_profile {
	uint32_t kind;          /* enum heapscope_profile_kind */
	uint32_t reserved;
	int64_t period;         /* sampling period when it was taken (end) */
	uint64_t start_ns;      /* session start (heap: = end_ns) */
	uint64_t end_ns;        /* snapshot / session stop time */
	uint64_t dropped;       /* samples the session could not keep
				 * (buffer full); 0 for heap profiles */
	size_t count;           /* samples[0 .. count) */
	struct heapscope_sample *samples;
	/* sums over the samples (bytes / objects) */
	double count_estimate;
	uint64_t bytes_estimate;
	uint64_t requested_estimate;
	uint64_t fragmentation_estimate; /* sum W/(r+1) * (a - r) */
};

/*
 * Heap profile: a consistent copy of every live sampled allocation, taken
 * under the sampled-region lock (no allocation happens while it is held),
 * reflecting every malloc and free that returned before the call.  On
 * success *out gets a profile to release with heapscope_profile_free().
 * Returns 0, -EINVAL (out NULL), -ENOMEM.
 */
int heapscope_heap_profile(struct heapscope_profile **out);

/*
 * Call fn(sample, arg) for every live sampled allocation (a snapshot is
 * taken first, so fn may allocate and free freely).  fn returns 0 to go
 * on, anything else to stop; that value is returned.  Returns 0 when every
 * sample was visited, -EINVAL, -ENOMEM, or fn's value.
 */
int heapscope_heap_iterate(int (*fn)(const struct heapscope_sample *s,
				     void *arg),
			   void *arg);

/* Release a profile (NULL is allowed). */
void heapscope_profile_free(struct heapscope_profile *p);

/* Handle of a running session, >= 1. */
typedef int heapscope_session_t;

/* Most sessions of each kind active at the same time. */
#define HEAPSCOPE_MAX_SESSIONS 16
/* Default session capacity (samples) when 0 is passed. */
#define HEAPSCOPE_SESSION_DEFAULT_SAMPLES (1u << 16)

/*
 * Start an allocation-profiling session: every sample taken by any thread
 * from now until heapscope_allocs_stop() is kept (TCMalloc's
 * AllocationSampleList; several sessions may run at once, each sees every
 * sample).  max_samples bounds its buffer (0 = default); samples beyond it
 * are counted in `dropped`.  Returns a handle >= 1, or -EBUSY (too many
 * sessions), -ENOMEM, -EINVAL (max_samples > 2^24).
 */
heapscope_session_t heapscope_allocs_start(size_t max_samples);

/*
 * Stop session h and hand over its samples as a HEAPSCOPE_PROFILE_ALLOCS
 * profile in *out.  Returns 0, -EINVAL (bad handle or out NULL).
 */
int heapscope_allocs_stop(heapscope_session_t h,
			  struct heapscope_profile **out);

/*
 * Start a lifetime-profiling session: objects sampled after this call and
 * freed before heapscope_lifetime_stop() are kept with their alloc and
 * free stacks, lifetime and whether the same thread freed them.  Same
 * limits and errors as heapscope_allocs_start().  While a lifetime session
 * runs, every sampled free unwinds its stack (about 1 us).
 */
heapscope_session_t heapscope_lifetime_start(size_t max_samples);

/* Stop a lifetime session; *out gets a HEAPSCOPE_PROFILE_LIFETIME
 * profile.  Returns 0, -EINVAL. */
int heapscope_lifetime_stop(heapscope_session_t h,
			    struct heapscope_profile **out);

/* Output formats of heapscope_profile_write(). */
enum heapscope_format {
	HEAPSCOPE_FORMAT_FOLDED = 1, /* "outer;...;leaf VALUE\n" per sample;
				      * VALUE = estimated bytes (heap,
				      * allocs) or lifetime ns (lifetime) */
	HEAPSCOPE_FORMAT_PPROF = 2,  /* gzip'd profile.proto (go tool pprof):
				      * heap: inuse_objects/count,
				      * inuse_space/bytes; allocs:
				      * alloc_objects, alloc_space; lifetime:
				      * objects/count, lifetime/nanoseconds,
				      * label same_thread */
};

/*
 * Write profile p to fd in format fmt.  Frames are symbolized in-process
 * with dladdr(): the exported (.dynsym) function name, else
 * "module+0xOFFSET".  Returns 0, -EINVAL, -ENOMEM, or -errno of write(2).
 * May allocate (with this library's malloc) and takes no allocator lock.
 */
int heapscope_profile_write(const struct heapscope_profile *p, int fd,
			    int fmt);

/* Convenience: take a heap profile and write it to fd.  0 or -errno. */
int heapscope_heap_profile_write(int fd, int fmt);

/* ---- allocator statistics ----------------------------------------------- */

/*
 * The whole allocator, in bytes.  Values are read without a lock: each is
 * exact at some moment, the set is not a snapshot.
 */
struct heapscope_allocator_stats {
	uint64_t in_use_bytes;         /* small objects handed out (thread
					* caches included, see below) +
					* large spans in use */
	uint64_t thread_cache_bytes;   /* free objects in the CALLING
					* thread's cache (other threads'
					* caches are not counted globally;
					* they are inside in_use_bytes) */
	uint64_t central_free_bytes;   /* free objects in central lists */
	uint64_t pageheap_free_bytes;  /* free committed spans */
	uint64_t pageheap_released_bytes; /* free spans given back to the OS */
	uint64_t released_total_bytes; /* cumulative bytes released */
	uint64_t system_bytes;         /* address space taken for the heap */
	uint64_t metadata_bytes;       /* address space for metadata */
	uint64_t large_bytes;          /* large allocations (whole spans) */
	uint64_t sampled_pages_bytes;  /* pages held by live samples */
	uint64_t sampled_proxy_bytes;  /* their proxy objects */
	uint64_t sampled_record_bytes; /* registry bytes touched */
	uint64_t sampled_inuse_estimate; /* sum a*W/(r+1) over live samples */
	uint64_t sampled_fragmentation_estimate; /* sum W/(r+1)*(a-r) */
};

/*
 * Fill *out (at most `size` bytes of it, so older callers keep working).
 * Returns 0, or -EINVAL when out is NULL.  Lock-free, never allocates.
 */
int heapscope_get_allocator_stats(struct heapscope_allocator_stats *out,
				  size_t size);

/*
 * Fragmentation profile (allocator/api/fragmentation_api.c; docs/profiles.md).
 * One entry per live sample that holds a proxy (allocated size at most
 * HEAPSCOPE_PROXY_MAX, default 4096 bytes; larger samples have none and
 * are left out: see docs/profiles.md) and whose proxy's span is known: the span
 * bytes the proxy's span cannot return to the OS, attributed to this
 * sample two ways (estimates for the W/(r+1) objects it stands for):
 *   frag_bytes      the seed's proxy method: an equal share of the span's
 *                   unused bytes per live object of the span;
 *   frag_age_bytes  the same share weighted by the sample's age over the
 *                   mean age of its size class (old objects pin spans).
 */
struct heapscope_fragmentation_entry {
	uint64_t seq;	       /* record id */
	uint64_t ptr;	       /* the sampled object */
	uint64_t requested, allocated, weight; /* r, a, W (bytes) */
	uint64_t age_ns;       /* now - allocation time */
	uint64_t span_bytes;   /* the proxy's span */
	uint32_t span_live;    /* objects out of it (proxy included) */
	uint32_t span_objects; /* objects it holds */
	double frag_bytes;     /* proxy method, bytes */
	double frag_age_bytes; /* age-weighted, bytes */
	uint32_t depth;	       /* frames in stack */
	uint32_t pad;
	uint64_t stack[64];    /* return addresses, innermost first */
};

/*
 * Refresh every live sample's proxy span data (the registry's record
 * extension read by collectors).  0, or -ENOSYS when sampling is not set
 * up.  Takes the sampled lock; O(live samples).
 */
int heapscope_fragmentation_refresh(void);

/*
 * Fill out[0..max) with the fragmentation entries of the live samples
 * (refreshing them first) and set *n to the number of entries there are.
 * Returns 0, -ENOSPC when there are more than max (the first max are
 * filled, *n says how many exist), -EINVAL, or -ENOSYS.  Takes the
 * sampled lock; allocates nothing.
 */
int heapscope_fragmentation_profile(struct heapscope_fragmentation_entry *out,
				    size_t max, size_t *n);

#ifdef __cplusplus
}
#endif

#endif /* HEAPSCOPE_HEAPSCOPE_H */
