// SPDX-License-Identifier: MIT
/*
 * allocator/api/fragmentation_api.c - the in-process fragmentation
 * profile (heapscope_fragmentation_refresh / _profile in heapscope.h):
 * the fragmentation records (sampling/fragmentation.c) attributed with
 * the formula the collector uses too (common/fragmentation.h).  Takes
 * the region lock; allocates nothing (the per-class sums are on the
 * stack, one per size class).
 */
#include <errno.h>
#include <string.h>

#include "base/clock.h"
#include "base/hs_common.h"
#include "core/size_class.h"
#include "fragmentation.h"
#include "heapscope/abi.h"
#include "heapscope/heapscope.h"
#include "region/region.h"
#include "sampling/fragmentation.h"
#include "sampling/registry.h"

_Static_assert(sizeof(((struct heapscope_fragmentation_entry *)0)->stack) ==
		       HEAPSCOPE_MAX_FRAMES * sizeof(uint64_t),
	       "heapscope_fragmentation_entry.stack holds a record's stack");

HS_EXPORT int heapscope_fragmentation_refresh(void)
{
	if (!hs_frag_records())
		return -ENOSYS;
	hs_region_lock();
	hs_frag_refresh_all(hs_clock_ns());
	hs_region_unlock();
	return 0;
}

/* The sample in registry slot i with its extension, when it can be
 * attributed: its size class in *cls, its proxy-method bytes in *frag,
 * its age at now in *age. */
static bool attributable(const struct heapscope_record *r,
			 const struct heapscope_record_ext *e, uint64_t now,
			 unsigned *cls, double *frag, uint64_t *age)
{
	double count;

	if (!r->seq || e->seq != r->seq || r->allocated > HS_MAX_SMALL_SIZE ||
	    !hs_frag_usable(r->allocated, e->proxy_span_bytes,
			    e->proxy_span_live, e->proxy_span_objects))
		return false;
	count = (double)r->weight / ((double)r->requested + 1);
	*cls = hs_size_to_class(r->allocated);
	*frag = hs_frag_bytes(count, r->allocated, e->proxy_span_bytes,
			      e->proxy_span_live);
	*age = hs_frag_age(now, r->time_ns);
	return true;
}

HS_EXPORT int
heapscope_fragmentation_profile(struct heapscope_fragmentation_entry *out,
				size_t max, size_t *n)
{
	struct hs_frag_class means[HS_NUM_CLASSES];
	const struct heapscope_record_ext *ext = hs_frag_records();
	uint64_t hw, now, age;
	unsigned cls;
	double frag;
	size_t k = 0;

	if (!n || (!out && max))
		return -EINVAL;
	*n = 0;
	if (!ext)
		return -ENOSYS;
	memset(means, 0, sizeof(means));
	hs_region_lock();
	hs_frag_refresh_all(hs_clock_ns());
	now = hs_clock_ns();
	hw = __atomic_load_n(&heapscope_registry.high_water, __ATOMIC_RELAXED);
	/* pass 1: per size class, the sums behind its mean age */
	for (uint64_t i = 0; i < hw; i++)
		if (attributable(hs_registry_record((uint32_t)i), &ext[i], now,
				 &cls, &frag, &age))
			hs_frag_class_add(&means[cls], frag, age);
	/* pass 2: entries */
	for (uint64_t i = 0; i < hw; i++) {
		const struct heapscope_record *r =
			hs_registry_record((uint32_t)i);
		const struct heapscope_record_ext *e = &ext[i];
		struct heapscope_fragmentation_entry *o;

		if (!attributable(r, e, now, &cls, &frag, &age))
			continue;
		if (k >= max) {
			k++;
			continue;
		}
		o = &out[k++];
		o->seq = r->seq;
		o->ptr = r->ptr;
		o->requested = r->requested;
		o->allocated = r->allocated;
		o->weight = r->weight;
		o->age_ns = age;
		o->span_bytes = e->proxy_span_bytes;
		o->span_live = e->proxy_span_live;
		o->span_objects = e->proxy_span_objects;
		o->frag_bytes = frag;
		o->frag_age_bytes = hs_frag_age_bytes(&means[cls], frag, age);
		o->depth = r->depth;
		memcpy(o->stack, r->stack, r->depth * sizeof(r->stack[0]));
	}
	hs_region_unlock();
	*n = k;
	return k > max ? -ENOSPC : 0;
}
