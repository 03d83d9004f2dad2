// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/sampled_free.c - retiring samples: the free of any
 * pointer in the sampled region (hs_sampled_free: a sample, or a large
 * block the region serves), a sample grown by realloc to an unsampled
 * size (hs_region_grow), and the usable size of a pointer in the region.
 * Invalid and double frees are counted and reported a few times; a sized
 * free whose size does not fit the sample is reported once per call
 * site and fires mismatched_free.  sample_free fires with the region
 * lock held, before the pages can be handed out again.
 */
#include <string.h>

#include "base/assert.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/os.h"
#include "base/stats.h"
#include "core/core.h"
#include "heapscope/abi.h"
#include "region/region.h"
#include "sampling.h"
#include "sampling/fragmentation.h"
#include "sampling/hs_unwind.h"
#include "sampling/probes.h"
#include "sampling/profile.h"
#include "sampling/registry.h"
#include "sampling/sample.h"

#define MAX_INVALID_REPORTS 8
/* Distinct call sites of mismatched sized frees reported on stderr. */
#define MISMATCH_SITES 64

void *hs_sample_release_locked(uint32_t slot, const void *p,
			       const uint64_t *stack, uint32_t depth,
			       uint64_t t, int lifetime,
			       struct hs_sample_acct *acct)
{
	struct heapscope_record *rec = hs_registry_record(slot);
	uint64_t seq = hs_registry_next_seq();
	void *proxy = (void *)(uintptr_t)rec->proxy;

	hs_assert_internal(rec->seq != 0 && rec->ptr == (uintptr_t)p);
	if (lifetime)
		hs_session_on_free(rec, stack, depth, t, hs_gettid());
	if (HS_PROBE_ENABLED(sample_free))
		HS_PROBE_SAMPLE_FREE(p, rec->requested, rec->allocated, rec->seq,
				     stack, depth, seq);
	HS_PROBE_COMPAT_FREE(p, rec->requested, rec->allocated);
	hs_sample_acct_of(rec, acct);
	hs_frag_clear(slot);
	hs_registry_release(slot); /* seq cleared first */
	hs_frag_refresh_some(t);
	return proxy;
}

static void report_invalid(const void *p, int guarded)
{
	uint64_t n = (uint64_t)__atomic_add_fetch(
		&hs_stats[HS_STAT_invalid_frees_total], 1, __ATOMIC_RELAXED);

	if (!guarded || n > MAX_INVALID_REPORTS)
		return;
	hs_log("heapscope: invalid or double free of %p in the sampled region "
	       "(ignored)%s\n", p,
	       n == MAX_INVALID_REPORTS ? "; further reports suppressed" : "");
}

/* The allocation a mismatched sized free refers to (copied under the
 * lock, reported after it). */
struct mismatch {
	uint64_t requested, allocated, seq;
	uint32_t depth;
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
};

static uintptr_t mismatch_sites[MISMATCH_SITES];

/* First report for this call site?  Lock-free claim of a table slot;
 * once the table is full, new sites are only counted. */
static int first_at_site(uintptr_t site)
{
	for (int i = 0; i < MISMATCH_SITES; i++) {
		uintptr_t cur = __atomic_load_n(&mismatch_sites[i],
						__ATOMIC_ACQUIRE);

		if (cur == site)
			return 0;
		if (cur == 0 &&
		    __atomic_compare_exchange_n(&mismatch_sites[i], &cur, site,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
		if (cur == site)
			return 0;
	}
	return 0;
}

static void report_mismatch(const void *p, size_t given,
			    const struct mismatch *m, const uint64_t *fstack,
			    uint32_t fdepth)
{
	char line[160];
	int n;

	hs_stat_add(HS_STAT_mismatched_frees_total, 1);
	if (HS_PROBE_ENABLED(mismatched_free))
		HS_PROBE_MISMATCHED_FREE(p, given, m->requested, m->allocated,
					 m->seq);
	if (!first_at_site(fdepth ? (uintptr_t)fstack[0] : 1))
		return;
	hs_log("heapscope: sized free of %p with size %zu, but it was "
	       "allocated with size %zu (usable %zu); freed anyway. Reported "
	       "once per call site.\n", p, given, (size_t)m->requested,
	       (size_t)m->allocated);
	if (fdepth)
		hs_log("heapscope:   freed at %p\n", (void *)(uintptr_t)fstack[0]);
	for (uint32_t i = 0; i < m->depth && i < 16; i++) {
		n = hs_snprintf(line, sizeof(line), "heapscope:   %s #%u %p\n",
				i == 0 ? "allocated at" : "            ", i,
				(void *)(uintptr_t)m->stack[i]);
		(void)n;
		hs_log("%s", line);
	}
}

/* Takes the region lock and looks p up (hs_region_lookup).  When p
 * starts a sample whose release needs the freeing stack (sample_free
 * probe, lifetime session; not while unwinding), drops the lock to
 * capture it into stack[] (*depth), then takes the lock and looks p up
 * again; a large unsampled block needs no stack.  *t: now (read before
 * the lock is taken, again after a capture).  Returns with the lock held.  (p's owner is freeing or growing it: between the
 * two lookups it changes only by a double free, which the second
 * reports.) */
static uint32_t lock_lookup(const void *p, uint32_t *page, int guarded,
			    int lifetime, uint64_t *stack, uint32_t *depth,
			    uint64_t *t)
{
	uint32_t slot;

	*t = hs_clock_ns(); /* before the lock: not part of its hold */
	hs_region_lock();
	slot = hs_region_lookup(p, page);
	if (slot != HS_PAGES_NONE && slot != HS_REGION_PLAIN && guarded &&
	    (HS_PROBE_ENABLED(sample_free) || lifetime)) {
		hs_region_unlock();
		*depth = hs_unwind_capture(stack, HEAPSCOPE_MAX_FRAMES);
		*t = hs_clock_ns();
		hs_region_lock();
		slot = hs_region_lookup(p, page);
	}
	return slot;
}

void hs_sampled_free(void *p, size_t size_hint)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	struct heapscope_record *rec;
	struct mismatch mm;
	struct hs_sample_acct acct;
	uint32_t depth = 0, slot, page = 0;
	int guarded = hs_guard_enter(), mismatched = 0;
	uint64_t t;
	int lifetime = __atomic_load_n(&hs_lifetime_sessions_active,
				       __ATOMIC_RELAXED);
	void *proxy;

	slot = lock_lookup(p, &page, guarded, lifetime, stack, &depth, &t);
	if (slot == HS_REGION_PLAIN) {
		/* a large unsampled block: no record, no probe */
		hs_region_block_free_locked(page);
		hs_region_unlock();
		goto out;
	}
	if (slot == HS_PAGES_NONE) {
		hs_region_unlock();
		report_invalid(p, guarded);
		goto out;
	}
	rec = hs_registry_record(slot);
	/* Sized free (free_sized, free_aligned_sized, sized delete): TCMalloc's
	 * rule, r <= size <= a.  0 means "no size given" (plain free); a
	 * free_sized(p, 0) of a non-empty block cannot be told apart. */
	if (size_hint &&
	    (size_hint < rec->requested || size_hint > rec->allocated)) {
		mismatched = 1;
		mm.requested = rec->requested;
		mm.allocated = rec->allocated;
		mm.seq = rec->seq;
		mm.depth = rec->depth < HEAPSCOPE_MAX_FRAMES ? rec->depth :
							       HEAPSCOPE_MAX_FRAMES;
		memcpy(mm.stack, rec->stack, mm.depth * sizeof(mm.stack[0]));
	}
	/* before the pages can be reused or decommitted */
	proxy = hs_sample_release_locked(slot, p, stack, depth, t, lifetime,
					 &acct);
	hs_pages_free(page);
	hs_region_publish_cache();
	hs_region_unlock();
	hs_sample_account(&acct, -1);
	if (proxy)
		hs_free_unsampled(proxy);
	if (mismatched && guarded) {
		if (!depth)
			depth = hs_unwind_capture(stack, HEAPSCOPE_MAX_FRAMES);
		report_mismatch(p, size_hint, &mm, stack, depth);
	} else if (mismatched) {
		hs_stat_add(HS_STAT_mismatched_frees_total, 1);
	}
out:
	if (guarded)
		hs_guard_leave();
}

size_t hs_sampled_usable_size(const void *p)
{
	uint32_t slot, page = 0;
	size_t a = 0;

	hs_region_lock();
	slot = hs_region_lookup(p, &page);
	if (slot == HS_REGION_PLAIN)
		a = (size_t)hs_pages_len(page) << HS_PAGE_SHIFT;
	else if (slot != HS_PAGES_NONE)
		a = hs_registry_record(slot)->allocated;
	hs_region_unlock();
	return a;
}

bool hs_region_grow(void *p, size_t n)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	uint32_t slot, page = 0, depth = 0;
	int guarded, lifetime;
	void *proxy = NULL;
	bool done = false, retired = false;
	struct hs_sample_acct acct;
	uint64_t t;

	if (n < HS_REGION_GROW_MIN || n > hs_region_block_max())
		return false;
	guarded = hs_guard_enter();
	lifetime =
		__atomic_load_n(&hs_lifetime_sessions_active, __ATOMIC_RELAXED);
	slot = lock_lookup(p, &page, guarded, lifetime, stack, &depth, &t);
	if (slot != HS_PAGES_NONE && hs_region_extend(page, slot, hs_region_pages_for(n))) {
		if (slot != HS_REGION_PLAIN) {
			/* a sample grown unsampled: its record goes */
			proxy = hs_sample_release_locked(slot, p, stack, depth, t,
							 lifetime, &acct);
			retired = true;
			hs_pages_set_slot(page, HS_REGION_PLAIN);
		}
		hs_region_block_account(page, 1);
		hs_region_publish_cache();
		done = true;
	}
	hs_region_unlock();
	if (retired)
		hs_sample_account(&acct, -1);
	if (proxy)
		hs_free_unsampled(proxy);
	if (guarded)
		hs_guard_leave();
	return done;
}
