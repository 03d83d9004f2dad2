// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/sampling.c - the sampling side's life cycle: start-up
 * (the registry, the region, the fragmentation records), fork, trim and
 * the sampling period.
 */
#include <errno.h>

#include "base/log.h"
#include "base/options.h"
#include "base/stats.h"
#include "heapscope/heapscope.h"
#include "region/region.h"
#include "sampling.h"
#include "sampling/fragmentation.h"
#include "sampling/hs_unwind.h"
#include "sampling/probes.h"
#include "sampling/registry.h"
#include "sampling/sample.h"
#include "sampling/sampler.h"

#define REGISTRY_CAPACITY ((uint64_t)4 << 20)
_Static_assert(REGISTRY_CAPACITY <= HEAPSCOPE_REGISTRY_MAX_CAPACITY,
	       "collectors read every slot the registry reserves");
/* A run's tag is its registry slot, below the capacity: HS_REGION_PLAIN
 * and HS_PAGES_NONE (= HS_REGISTRY_NO_SLOT) are never slots. */
_Static_assert(REGISTRY_CAPACITY < HS_REGION_PLAIN &&
		       HS_REGISTRY_NO_SLOT == HS_PAGES_NONE,
	       "registry slots and region tags overlap");

static int sampling_ready; /* hs_sampling_init has run (atomic) */

bool hs_sampling_ready(void)
{
	return __atomic_load_n(&sampling_ready, __ATOMIC_ACQUIRE);
}

/* Reserve the registry, the region and its page index.  0 or -errno. */
static int setup_region(void)
{
	int64_t cache;

	if (hs_registry_init(REGISTRY_CAPACITY) != 0) {
		hs_log("heapscope: cannot reserve the sample registry; sampling off\n");
		return -ENOMEM;
	}
	if (hs_region_reserve() != 0) {
		hs_log("heapscope: cannot reserve the sampled region; sampling off\n");
		return -ENOMEM;
	}
	/* without it fragmentation profiles are empty; sampling still works */
	if (hs_frag_init(REGISTRY_CAPACITY))
		hs_log("heapscope: cannot reserve the record extension; no fragmentation profile\n");
	cache = hs_option_get(HS_OPT_SAMPLED_CACHE);
	if (hs_region_start(cache > 0 ? (uint64_t)cache : 0,
			    &heapscope_registry.cached_bytes)) {
		hs_log("heapscope: cannot reserve the sampled page index; sampling off\n");
		return -ENOMEM;
	}
	heapscope_registry.region_start = hs_sampled_start;
	heapscope_registry.region_size = hs_sampled_size;
	return 0;
}

void hs_sampling_init(void)
{
	static int done;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	hs_sampler_global_init();
	hs_stats_publish_unwind(hs_unwind_cache_bytes());
	hs_registry_set_period(hs_sampler_period());
	setup_region(); /* on failure samples are dropped (served unsampled) */
	__atomic_store_n(&sampling_ready, 1, __ATOMIC_RELEASE);
}

void hs_sampling_fork_prepare(void)
{
	hs_region_fork_prepare();
}

void hs_sampling_fork_parent(void)
{
	hs_region_fork_parent();
}

void hs_sampling_fork_child(void)
{
	hs_region_fork_child();
}

size_t hs_sampled_trim(void)
{
	size_t pages;

	if (!__atomic_load_n(&hs_sampled_size, __ATOMIC_ACQUIRE))
		return 0;
	hs_region_lock();
	pages = hs_region_trim_locked();
	/* records of freed samples (about 0.3 MiB after a 1 GiB heap) */
	size_t records =
		hs_registry_trim() + hs_frag_trim() + hs_unwind_trim();
	hs_region_unlock();
	return pages + records;
}

int hs_sampling_set_period(int64_t bytes)
{
	int64_t old;

	if (bytes > HEAPSCOPE_MAX_SAMPLE_PERIOD)
		return -EINVAL;
	hs_region_lock();
	old = hs_sampler_set_period(bytes);
	hs_registry_set_period(bytes);
	hs_region_unlock();
	if (HS_PROBE_ENABLED(rate_change))
		HS_PROBE_RATE_CHANGE(bytes, old);
	return 0;
}
