/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/clock.h - the allocator's one clock (clock.c): every
 * time stamp of a record, a profile or a release policy comes from here.
 * vDSO calls, no system call, no allocation; thread-safe.
 */
#ifndef HS_CLOCK_H
#define HS_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns: records' time_ns, profiles' start / end, the
 * fragmentation refresh.  The unit and clock every reader of the
 * registry assumes (include/heapscope/abi.h). */
uint64_t hs_clock_ns(void);

/* CLOCK_REALTIME in ns (a pprof profile's time_nanos). */
uint64_t hs_clock_wall_ns(void);

/* Coarse monotonic milliseconds (CLOCK_MONOTONIC_COARSE: 1-4 ms
 * resolution), wrapping every 49 days: compare differences only.  For
 * the release policies' ages. */
uint32_t hs_clock_coarse_ms(void);

#endif /* HS_CLOCK_H */
