// SPDX-License-Identifier: MIT
/*
 * allocator/session.c - allocation- and lifetime-profiling sessions
 * (TCMalloc's AllocationSampleList) and the profile objects they return.
 *
 * A session owns a fixed buffer of struct heapscope_sample taken from mmap
 * when it starts (hs_os_alloc, touched as it fills), so the hooks that
 * run on the sampled path under the sampled lock never allocate.  Active
 * sessions sit in a small table walked on every sampled alloc (allocs
 * sessions) or sampled free (lifetime sessions); the table is only
 * changed with the sampled lock held, so the hooks see it consistently.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "profile.h"
#include "registry.h"

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

/* Mapping size of a profile box: the header page plus the samples. */
struct profile_box {
	size_t samples_bytes;
	struct heapscope_profile p;
};

uint64_t hs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t est(uint64_t w, uint64_t x, uint64_t r)
{
	return (uint64_t)((unsigned __int128)w * x / ((unsigned __int128)r + 1));
}

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
	s->bytes_estimate = est(rec->weight, rec->allocated, rec->requested);
	s->requested_estimate = est(rec->weight, rec->requested, rec->requested);
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

HS_EXPORT void heapscope_profile_free(struct heapscope_profile *p)
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
				est(s->weight, s->allocated - s->requested,
				    s->requested);
	}
}

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

static heapscope_session_t start(uint32_t kind, size_t max_samples)
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
	p->start_ns = hs_now_ns();
	hs_sampled_lock();
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
	hs_sampled_unlock();
	if (h < 0)
		heapscope_profile_free(p);
	return h;
}

static int stop(heapscope_session_t h, uint32_t kind,
		struct heapscope_profile **out)
{
	struct heapscope_profile *p = NULL;
	int *active = kind == HEAPSCOPE_PROFILE_ALLOCS ?
			      &hs_allocs_sessions_active :
			      &hs_lifetime_sessions_active;

	if (!out || h < 1 || h > NSESSIONS)
		return -EINVAL;
	hs_sampled_lock();
	if (sessions[h - 1].kind == kind) {
		p = sessions[h - 1].prof;
		sessions[h - 1] = (struct session){ 0 };
		__atomic_fetch_sub(active, 1, __ATOMIC_RELEASE);
	}
	hs_sampled_unlock();
	if (!p)
		return -EINVAL;
	p->end_ns = hs_now_ns();
	p->period = heapscope_get_sample_period();
	hs_profile_sum(p);
	*out = p;
	return 0;
}

HS_EXPORT heapscope_session_t heapscope_allocs_start(size_t max_samples)
{
	return start(HEAPSCOPE_PROFILE_ALLOCS, max_samples);
}

HS_EXPORT int heapscope_allocs_stop(heapscope_session_t h,
				    struct heapscope_profile **out)
{
	return stop(h, HEAPSCOPE_PROFILE_ALLOCS, out);
}

HS_EXPORT heapscope_session_t heapscope_lifetime_start(size_t max_samples)
{
	return start(HEAPSCOPE_PROFILE_LIFETIME, max_samples);
}

HS_EXPORT int heapscope_lifetime_stop(heapscope_session_t h,
				      struct heapscope_profile **out)
{
	return stop(h, HEAPSCOPE_PROFILE_LIFETIME, out);
}
