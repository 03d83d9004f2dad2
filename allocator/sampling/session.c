// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/session.c - allocation- and lifetime-profiling
 * sessions (TCMalloc's AllocationSampleList): their table and the hooks
 * the sampled path calls.  The profile objects they fill are profile.c;
 * the public functions are api/profile_api.c.
 *
 * A session owns a fixed buffer of struct heapscope_sample taken from mmap
 * when it starts (hs_os_alloc, touched as it fills), so the hooks that
 * run on the sampled path under the region lock never allocate.  Active
 * sessions sit in a small table walked on every sampled alloc (allocs
 * sessions) or sampled free (lifetime sessions); the table is only
 * changed with the region lock held, so the hooks see it consistently.
 */
#include <errno.h>
#include <string.h>

#include "base/clock.h"
#include "region/region.h"
#include "sampling/profile.h"
#include "sampling/registry.h"
#include "sampling/sampler.h"

int hs_allocs_sessions_active;
int hs_lifetime_sessions_active;

struct session {
	uint32_t kind;    /* 0 = slot free, else enum heapscope_profile_kind */
	uint64_t start_seq; /* lifetime: only records with seq >= this */
	struct heapscope_profile *prof;
	size_t cap;
};

#define NSESSIONS (2 * HEAPSCOPE_MAX_SESSIONS)
static struct session sessions[NSESSIONS];

/* Lock held. */
static struct heapscope_sample *next_slot(struct session *ss)
{
	struct heapscope_profile *p = ss->prof;

	if (p->count >= ss->cap) {
		p->dropped++;
		return NULL;
	}
	return &p->samples[p->count++];
}

void hs_session_on_alloc(const struct heapscope_record *rec)
{
	for (int i = 0; i < NSESSIONS; i++) {
		struct heapscope_sample *s;

		if (sessions[i].kind != HEAPSCOPE_PROFILE_ALLOCS)
			continue;
		s = next_slot(&sessions[i]);
		if (s)
			hs_sample_from_record(s, rec);
	}
}

void hs_session_on_free(const struct heapscope_record *rec,
			const uint64_t *stack, uint32_t depth, uint64_t t_ns,
			uint32_t tid)
{
	for (int i = 0; i < NSESSIONS; i++) {
		struct heapscope_sample *s;

		if (sessions[i].kind != HEAPSCOPE_PROFILE_LIFETIME ||
		    rec->seq < sessions[i].start_seq)
			continue;
		s = next_slot(&sessions[i]);
		if (!s)
			continue;
		hs_sample_from_record(s, rec);
		s->free_time_ns = t_ns;
		s->lifetime_ns = t_ns > rec->time_ns ? t_ns - rec->time_ns : 0;
		s->free_tid = tid;
		s->same_thread = tid == rec->tid;
		s->free_depth = depth;
		memcpy(s->free_stack, stack, depth * sizeof(stack[0]));
	}
}

heapscope_session_t hs_session_start(uint32_t kind, size_t max_samples)
{
	struct heapscope_profile *p;
	int *active = kind == HEAPSCOPE_PROFILE_ALLOCS ?
			      &hs_allocs_sessions_active :
			      &hs_lifetime_sessions_active;
	int h = -EBUSY;

	if (max_samples > ((size_t)1 << 24))
		return -EINVAL;
	if (max_samples == 0)
		max_samples = HEAPSCOPE_SESSION_DEFAULT_SAMPLES;
	p = hs_profile_new(kind, max_samples);
	if (!p)
		return -ENOMEM;
	p->start_ns = hs_clock_ns();
	hs_region_lock();
	for (int i = 0; i < NSESSIONS; i++) {
		if (sessions[i].kind)
			continue;
		sessions[i] = (struct session){
			.kind = kind,
			.start_seq = __atomic_load_n(&heapscope_registry.next_seq,
						     __ATOMIC_RELAXED),
			.prof = p,
			.cap = max_samples,
		};
		__atomic_fetch_add(active, 1, __ATOMIC_RELEASE);
		h = i + 1;
		break;
	}
	hs_region_unlock();
	if (h < 0)
		hs_profile_free(p);
	return h;
}

int hs_session_stop(heapscope_session_t h, uint32_t kind,
		    struct heapscope_profile **out)
{
	struct heapscope_profile *p = NULL;
	int *active = kind == HEAPSCOPE_PROFILE_ALLOCS ?
			      &hs_allocs_sessions_active :
			      &hs_lifetime_sessions_active;

	if (!out || h < 1 || h > NSESSIONS)
		return -EINVAL;
	hs_region_lock();
	if (sessions[h - 1].kind == kind) {
		p = sessions[h - 1].prof;
		sessions[h - 1] = (struct session){ 0 };
		__atomic_fetch_sub(active, 1, __ATOMIC_RELEASE);
	}
	hs_region_unlock();
	if (!p)
		return -EINVAL;
	p->end_ns = hs_clock_ns();
	p->period = hs_sampler_period();
	hs_profile_sum(p);
	*out = p;
	return 0;
}
