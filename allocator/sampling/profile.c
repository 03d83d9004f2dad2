// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/profile.c - the profile objects the API hands out
 * (struct heapscope_profile, its samples from mmap so that building one
 * neither perturbs the heap it describes nor allocates under the region
 * lock), a sample made from a registry record, and the heap snapshot.
 */
#include <string.h>

#include "base/os.h"
#include "base/stats.h"
#include "heapscope/abi.h"
#include "heapscope/heapscope.h"
#include "region/region.h"
#include "sampling/profile.h"
#include "sampling/registry.h"
#include "sampling/sampler.h"

/* Records, samples and the freeing stacks of sessions hold the same
 * frames (copied with memcpy, depth clamped to HEAPSCOPE_MAX_FRAMES). */
_Static_assert(sizeof(((struct heapscope_sample *)0)->stack) ==
			       sizeof(((struct heapscope_record *)0)->stack) &&
		       sizeof(((struct heapscope_sample *)0)->free_stack) ==
			       HEAPSCOPE_MAX_FRAMES * sizeof(uint64_t),
	       "a sample's stacks and a record's differ");

/* Mapping size of a profile box: the header page plus the samples. */
struct profile_box {
	size_t samples_bytes;
	struct heapscope_profile p;
};

void hs_sample_from_record(struct heapscope_sample *s,
			   const struct heapscope_record *rec)
{
	uint32_t depth = rec->depth < HEAPSCOPE_MAX_FRAMES ? rec->depth :
							     HEAPSCOPE_MAX_FRAMES;

	memset(s, 0, offsetof(struct heapscope_sample, stack));
	s->ptr = rec->ptr;
	s->requested = rec->requested;
	s->allocated = rec->allocated;
	s->alignment = rec->alignment;
	s->weight = rec->weight;
	s->count_estimate = (double)rec->weight / ((double)rec->requested + 1.0);
	s->bytes_estimate = hs_sampler_estimate(rec->weight, rec->allocated, rec->requested);
	s->requested_estimate = hs_sampler_estimate(rec->weight, rec->requested, rec->requested);
	s->seq = rec->seq;
	s->time_ns = rec->time_ns;
	s->tid = rec->tid;
	s->depth = depth;
	memcpy(s->stack, rec->stack, depth * sizeof(s->stack[0]));
	memset(&s->free_time_ns, 0,
	       offsetof(struct heapscope_sample, free_stack) -
		       offsetof(struct heapscope_sample, free_time_ns));
}

struct heapscope_profile *hs_profile_new(uint32_t kind, size_t cap)
{
	size_t bytes = (cap * sizeof(struct heapscope_sample) + 0xFFF) &
		       ~(size_t)0xFFF;
	struct profile_box *box = hs_os_alloc(4096, 4096);

	if (!box)
		return NULL;
	if (bytes) {
		box->p.samples = hs_os_alloc(bytes, 4096);
		if (!box->p.samples) {
			hs_os_unmap(box, 4096);
			return NULL;
		}
	}
	box->samples_bytes = bytes;
	box->p.kind = kind;
	return &box->p;
}

void hs_profile_free(struct heapscope_profile *p)
{
	struct profile_box *box;

	if (!p)
		return;
	box = (struct profile_box *)((char *)p - offsetof(struct profile_box, p));
	if (box->samples_bytes)
		hs_os_unmap(p->samples, box->samples_bytes);
	hs_os_unmap(box, 4096);
}

void hs_profile_sum(struct heapscope_profile *p)
{
	p->count_estimate = 0;
	p->bytes_estimate = p->requested_estimate = 0;
	p->fragmentation_estimate = 0;
	for (size_t i = 0; i < p->count; i++) {
		const struct heapscope_sample *s = &p->samples[i];

		p->count_estimate += s->count_estimate;
		p->bytes_estimate += s->bytes_estimate;
		p->requested_estimate += s->requested_estimate;
		if (s->allocated > s->requested)
			p->fragmentation_estimate +=
				hs_sampler_estimate(s->weight, s->allocated - s->requested,
				    s->requested);
	}
}

size_t hs_sampled_snapshot(struct heapscope_sample *out, size_t max,
			   uint64_t *live)
{
	size_t n = 0;
	uint64_t hw;

	hs_region_lock();
	/* the registry's count, written under the lock (HS_STAT_live is
	 * updated after it: sample.h struct hs_sample_acct) */
	*live = __atomic_load_n(&heapscope_registry.live, __ATOMIC_RELAXED);
	if (*live > max) {
		hs_region_unlock();
		return (size_t)-1;
	}
	hw = __atomic_load_n(&heapscope_registry.high_water, __ATOMIC_RELAXED);
	for (uint64_t i = 0; i < hw && n < max; i++) {
		const struct heapscope_record *rec = hs_registry_record((uint32_t)i);

		if (rec->seq)
			hs_sample_from_record(&out[n++], rec);
	}
	hs_region_unlock();
	return n;
}
