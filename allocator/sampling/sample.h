/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling/sample.h - taking and retiring samples, shared by
 * the files of the sampling side (private to it).
 */
#ifndef HS_SAMPLE_H
#define HS_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "heapscope/abi.h"

/* ---- sample.c ---- */

/* What a sample adds to the statistics, copied from its record under the
 * region lock (hs_sample_acct_of) so that the atomic adds, the two
 * 128-bit divisions of the estimates and their cache misses on the
 * shared counters happen after the lock is released (hs_sample_account):
 * they were a third of the lock's hold time per sampled malloc and free.
 * Readers that need the registry and a count to agree use the registry's
 * own live (written under the lock), not HS_STAT_live. */
struct hs_sample_acct {
	uint64_t requested, allocated, weight, span_bytes;
	bool proxy;
};

/* Lock held: the figures of the record rec. */
void hs_sample_acct_of(const struct heapscope_record *rec,
		       struct hs_sample_acct *a);

/* Any thread, no lock: the sample a enters (sign 1) or leaves (-1) the
 * statistics: the sampling counters and, for a sample without a proxy,
 * the heap's large-block figures (relaxed atomics). */
void hs_sample_account(const struct hs_sample_acct *a, int sign);

/* ---- sampled_free.c ---- */

/* Region lock held.  Retire the record in slot of the sampled allocation
 * p (its pages are the caller's business): lifetime sessions,
 * sample_free before the pages can be reused, registry.  stack/depth:
 * where it was freed; t: now (ns); lifetime: a lifetime session runs.
 * *acct gets its figures, for hs_sample_account(acct, -1) after the
 * lock.  Returns its proxy (to be freed after the lock), or NULL. */
void *hs_sample_release_locked(uint32_t slot, const void *p,
			       const uint64_t *stack, uint32_t depth,
			       uint64_t t, int lifetime,
			       struct hs_sample_acct *acct);

/* ---- sampling.c ---- */

/* hs_sampling_init has run: options are final, the region is set up (or
 * could not be).  Atomic. */
bool hs_sampling_ready(void);

/* Set the period (the body of heapscope_set_sample_period, which the
 * collector's control word also reaches): takes the region lock, fires
 * rate_change.  0, or -EINVAL above HEAPSCOPE_MAX_SAMPLE_PERIOD. */
int hs_sampling_set_period(int64_t bytes);

#endif /* HS_SAMPLE_H */
