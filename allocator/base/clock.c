/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/clock.c - the allocator's clocks (clock.h).
 */
#include <time.h>

#include "base/clock.h"

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hs_clock_ns(void)
{
	return ns_of(CLOCK_MONOTONIC);
}

uint64_t hs_clock_wall_ns(void)
{
	return ns_of(CLOCK_REALTIME);
}

uint32_t hs_clock_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000u +
			  (uint64_t)ts.tv_nsec / 1000000u);
}
