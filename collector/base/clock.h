/* SPDX-License-Identifier: MIT */
/* clock.h - the wall clock as the collector's profiles state it. */
#ifndef HS_CLOCK_H
#define HS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_REALTIME in ns since the epoch (pprof time_nanos).  Thread-safe. */
static inline uint64_t hs_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#endif /* HS_CLOCK_H */
