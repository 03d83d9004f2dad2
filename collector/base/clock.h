/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the collector's one clock.  Every time the collector reads is
 * one of these two:
 *   hs_mono_ns  CLOCK_MONOTONIC, the clock of the BPF events' ts_ns
 *               (bpf_ktime_get_ns) and of the registry records' time_ns:
 *               windows, lifetimes, ages, deadlines, rate limits;
 *   hs_wall_ns  CLOCK_REALTIME, what a profile states as its time (pprof
 *               time_nanos) and a process entry's creation time.
 * Both are thread-safe and return ns.
 */
#ifndef HS_CLOCK_H
#define HS_CLOCK_H

#include <stdint.h>
#include <time.h>

#define HS_NS_PER_MS 1000000ull
#define HS_NS_PER_S 1000000000ull

/* CLOCK_MONOTONIC in ns (same clock as bpf_ktime_get_ns). */
static inline uint64_t hs_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * HS_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME in ns since the epoch (pprof time_nanos). */
static inline uint64_t hs_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * HS_NS_PER_S + (uint64_t)ts.tv_nsec;
}

#endif /* HS_CLOCK_H */
