/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/profile.h - the profile objects and sessions behind
 * the in-process profile API (api/profile_api.c, api/profile_write.c):
 * profile.c and session.c, and the session hooks the sampled path calls.
 * Private to the sampling side and the API.
 */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_common.h"
#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

/* ---- profile.c ---- */

/* Fill s from a registry record (the estimates included; lifetime fields
 * zeroed).  Pure: no lock, no allocation. */
void hs_sample_from_record(struct heapscope_sample *s,
			   const struct heapscope_record *rec);

/* A profile whose samples array holds room for cap samples, from mmap.
 * NULL on ENOMEM. */
struct heapscope_profile *hs_profile_new(uint32_t kind, size_t cap);
/* Unmap a profile from hs_profile_new (NULL is allowed). */
void hs_profile_free(struct heapscope_profile *p);
/* Recompute the profile's sums from its samples. */
void hs_profile_sum(struct heapscope_profile *p);

/* Copy every live sample into out[0..max) under the region lock.
 * Returns the number copied, or (size_t)-1 when more than max are live
 * (then *live holds the count to retry with). */
size_t hs_sampled_snapshot(struct heapscope_sample *out, size_t max,
			   uint64_t *live);

/* ---- session.c ---- */

/* Non-zero while any allocs / lifetime session runs (atomic reads on the
 * sampled path decide whether to call the hooks below). */
extern int hs_allocs_sessions_active;
extern int hs_lifetime_sessions_active;

/* Hooks, called with the region lock held (sample.c, sampled_free.c): a
 * sample was taken (every allocs session keeps it) / a sample is being
 * freed (every lifetime session that started before it was taken keeps
 * it). */
void hs_session_on_alloc(const struct heapscope_record *rec);
void hs_session_on_free(const struct heapscope_record *rec,
			const uint64_t *stack, uint32_t depth, uint64_t t_ns,
			uint32_t tid);

/* Start a session of kind (HEAPSCOPE_PROFILE_ALLOCS / _LIFETIME) keeping
 * up to max_samples (0 = default); stop session h of that kind, handing
 * its profile over in *out.  Errors as heapscope_allocs_start / _stop. */
heapscope_session_t hs_session_start(uint32_t kind, size_t max_samples);
int hs_session_stop(heapscope_session_t h, uint32_t kind,
		    struct heapscope_profile **out);

#endif /* HS_PROFILE_H */
