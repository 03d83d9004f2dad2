// SPDX-License-Identifier: MIT
/*
 * allocator/api/sampling_api.c - the sampling functions of
 * include/heapscope/heapscope.h: the period, whether a collector is
 * attached, the region's check.  (The statistics are api/stats_api.c.)
 */
#include "base/hs_common.h"
#include "heapscope/heapscope.h"
#include "region/region.h"
#include "sampling/probes.h"
#include "sampling/sample.h"
#include "sampling/sampler.h"

HS_EXPORT int64_t heapscope_get_sample_period(void)
{
	return hs_sampler_period();
}

HS_EXPORT int heapscope_set_sample_period(int64_t bytes)
{
	return hs_sampling_set_period(bytes);
}

HS_EXPORT int heapscope_collector_attached(void)
{
	return heapscope_sample_alloc_semaphore != 0;
}

HS_EXPORT int heapscope_sampled_check(void)
{
	int r;

	hs_region_lock();
	r = hs_pages_is_valid();
	hs_region_unlock();
	return r;
}
