/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/profile.h - internals of the in-process profile API
 * (session.c, profile_api.c, profile_write.c) and the hooks the sampling side
 * calls on the sampled path.  Private to the sampling side.
 */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"
#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

/* Non-zero while any allocs / lifetime session runs (atomic reads on the
 * sampled path decide whether to call the hooks below). */
extern int hs_allocs_sessions_active;
extern int hs_lifetime_sessions_active;

/* Fill s from a registry record (the estimates included; lifetime fields
 * zeroed).  Pure: no lock, no allocation. */
void hs_sample_from_record(struct heapscope_sample *s,
			   const struct heapscope_record *rec);

/* Hooks, called with the region lock held (sample.c, sampled_free.c): a sample was
 * taken (every allocs session keeps it) / a sample is being freed (every
 * lifetime session that started before it was taken keeps it). */
void hs_session_on_alloc(const struct heapscope_record *rec);
void hs_session_on_free(const struct heapscope_record *rec,
			const uint64_t *stack, uint32_t depth, uint64_t t_ns,
			uint32_t tid);

/* sampling.c: copy every live sample into out[0..max) under the lock.
 * Returns the number copied, or (size_t)-1 when more than max are live
 * (then *live holds the count to retry with). */
size_t hs_sampled_snapshot(struct heapscope_sample *out, size_t max,
			   uint64_t *live);

/* A profile whose samples array holds room for cap samples, from mmap.
 * NULL on ENOMEM. */
struct heapscope_profile *hs_profile_new(uint32_t kind, size_t cap);
/* Recompute the profile's sums from its samples. */
void hs_profile_sum(struct heapscope_profile *p);

#endif /* HS_PROFILE_H */
