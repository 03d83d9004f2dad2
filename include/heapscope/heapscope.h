/* SPDX-License-Identifier: MIT */
/*
 * heapscope/heapscope.h - in-process API of libheapscope.so.
 *
 * These functions exist only when the program runs on heapscope (preloaded
 * or linked).  A program that may run without it can declare them weak:
 *     #pragma weak heapscope_set_sample_period
 * and test the address before calling.
 *
 * Units are bytes.  Every function is thread-safe and async-signal-unsafe
 * only where noted.  None of them allocates.
 */
#ifndef HEAPSCOPE_HEAPSCOPE_H
#define HEAPSCOPE_HEAPSCOPE_H

#include <stddef.h>
#include <stdint.h>

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

#ifdef __cplusplus
}
#endif

#endif /* HEAPSCOPE_HEAPSCOPE_H */
