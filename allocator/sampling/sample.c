// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/sample.c - taking a sample (tcmalloc's
 * allocation_sampling): after the sampler chose an allocation
 * (sampling/sampler.c), give it pages of its own in the sampled region
 * (region/), a proxy object in the normal heap when it is small enough,
 * its stack, a registry record, the sample_alloc probe, and its share of
 * the statistics.
 *
 * Small samples (allocated size up to HEAPSCOPE_PROXY_MAX, default 4096)
 * hold a proxy object in the normal heap until they are freed: the
 * fragmentation records (sampling/fragmentation.c) read the occupancy of
 * its span.  Locking: region/region.h.
 */
#include <string.h>

#include "base/clock.h"
#include "base/options.h"
#include "base/os.h"
#include "base/stats.h"
#include "core/core.h"
#include "heapscope/abi.h"
#include "region/region.h"
#include "sampling.h"
#include "sampling/hs_unwind.h"
#include "sampling/probes.h"
#include "sampling/profile.h"
#include "sampling/registry.h"
#include "sampling/fragmentation.h"
#include "sampling/sample.h"
#include "sampling/sampler.h"

void hs_sample_acct_of(const struct heapscope_record *rec,
		       struct hs_sample_acct *a)
{
	a->requested = rec->requested;
	a->allocated = rec->allocated;
	a->weight = rec->weight;
	a->span_bytes = rec->span_bytes;
	a->proxy = rec->proxy != 0;
}

void hs_sample_account(const struct hs_sample_acct *rec, int sign)
{
	/* The heap's own figures (mallinfo2, heapscope_get_stats) count a
	 * sample as the block it is: one with a proxy already is, through
	 * the proxy (a block of its size class); one without, as a large
	 * allocation in the region.  (Without this, a program whose big
	 * blocks were all sampled showed none of them in mallinfo2.) */
	if (!rec->proxy) {
		hs_stat_large(HS_POOL_REGION, sign * (int64_t)rec->allocated,
			      sign);
		/* so readers can tell these region blocks from the pages
		 * sampling adds (HEAPSCOPE_STAT_SAMPLED_LARGE_BYTES) */
		hs_stat_add(HS_STAT_sampled_large_bytes,
			    sign * (int64_t)rec->allocated);
	}
	int64_t inuse = (int64_t)hs_sampler_estimate(rec->weight, rec->allocated, rec->requested);
	int64_t frag = rec->allocated > rec->requested ?
		(int64_t)hs_sampler_estimate(rec->weight, rec->allocated - rec->requested, rec->requested) : 0;
	int64_t proxy = rec->proxy ? (int64_t)rec->allocated : 0;

	hs_stat_add(sign > 0 ? HS_STAT_samples_total : HS_STAT_frees_total, 1);
	hs_stat_add(HS_STAT_live, sign);
	hs_stat_add(HS_STAT_pages_bytes, sign * (int64_t)rec->span_bytes);
	hs_stat_add(HS_STAT_proxy_bytes, sign * proxy);
	hs_stat_add(HS_STAT_inuse_estimate, sign * inuse);
	hs_stat_add(HS_STAT_fragmentation_estimate, sign * frag);
}

/* Does a sample of r requested, a allocated bytes hold a proxy?  Small
 * classes only, and only up to HEAPSCOPE_PROXY_MAX bytes of a (default
 * 4096: below one OS page a proxy costs at most the page rounding the
 * sample's own page already pays; above it, a whole extra object). */
static bool wants_proxy(size_t r, size_t a)
{
	int64_t max = hs_option_get(HS_OPT_PROXY_MAX);

	return r <= HS_MAX_SMALL_SIZE && a <= HS_MAX_SMALL_SIZE && max > 0 &&
	       a <= (uint64_t)max;
}

/* Take the sample: pages, proxy, stack, record, probe.  Guard held.
 * grow: a live sampled allocation that realloc is growing to r bytes, or
 * NULL; when its page run has (or can get, in place) the pages r needs,
 * the new sample reuses its address and contents and its old record is
 * retired first (sample_free, then sample_alloc of the same pointer). */
static void *take_sample(size_t r, size_t align, size_t w, void *grow)
{
	uint64_t stack[HEAPSCOPE_MAX_FRAMES];
	struct heapscope_record *rec;
	size_t a, bytes, npages, align_pages;
	uint32_t depth, slot, page, old_slot;
	uint64_t seq, t;
	void *proxy = NULL, *old_proxy = NULL, *p;
	struct hs_sample_acct acct, old_acct;
	struct hs_span_occupancy occ;
	bool huge, has_occ = false, retired = false;

	if (align > HS_REGION_ALIGN)
		return NULL;
	a = hs_alloc_size_for(r, align);
	bytes = a > r ? a : r;
	if (bytes == 0)
		bytes = 1;
	npages = (bytes + HS_PAGE_SIZE - 1) >> HS_PAGE_SHIFT;
	if (bytes > hs_sampled_size || npages > UINT32_MAX / 2)
		return NULL;
	align_pages = align > HS_PAGE_SIZE ? align >> HS_PAGE_SHIFT : 1;
	/* whole huge pages, as the page heap maps such a block: the tail
	 * too (sort fills its buffer from both ends) */
	huge = hs_region_wants_huge(bytes);
	if (huge) {
		size_t hp = HS_HUGE_PAGE >> HS_PAGE_SHIFT;

		npages = (npages + hp - 1) & ~(hp - 1);
		if (align_pages < hp)
			align_pages = hp;
	}
	if (wants_proxy(r, a)) {
		proxy = hs_alloc_unsampled(r, align);
		if (!proxy)
			return NULL;
		/* the span's occupancy is a snapshot either way: read it
		 * (a pagemap walk and a cache miss) before the lock */
		has_occ = hs_frag_occupancy(proxy, &occ);
	}
	depth = hs_unwind_capture(stack, HEAPSCOPE_MAX_FRAMES);
	t = hs_clock_ns();

	hs_region_lock();
	slot = hs_registry_slot_alloc();
	if (slot == HS_REGISTRY_NO_SLOT)
		goto fail;
	if (grow && (old_slot = hs_region_lookup(grow, &page)) != HS_PAGES_NONE &&
	    hs_region_extend(page, old_slot, (uint32_t)npages)) {
		p = grow;
		if (old_slot != HS_REGION_PLAIN) {
			retired = true;
			old_proxy = hs_sample_release_locked(
				old_slot, p, stack, depth, t,
				__atomic_load_n(&hs_lifetime_sessions_active,
						__ATOMIC_RELAXED),
				&old_acct);
		}
		hs_pages_set_slot(page, slot);
		npages = hs_pages_len(page);
	} else {
		page = hs_pages_alloc((uint32_t)npages, (uint32_t)align_pages,
				      slot);
		if (page == HS_PAGES_NONE) {
			hs_registry_slot_free(slot);
			goto fail;
		}
		p = hs_region_addr(page);
	}
	if (huge)
		hs_pages_set_huge(page);
	rec = hs_registry_record(slot);
	rec->ptr = (uintptr_t)p;
	rec->requested = r;
	rec->allocated = a;
	rec->alignment = align;
	rec->weight = w;
	rec->time_ns = t;
	rec->proxy = (uintptr_t)proxy;
	rec->span_start = (uintptr_t)p;
	rec->span_bytes = npages << HS_PAGE_SHIFT;
	rec->tid = hs_gettid();
	rec->depth = depth;
	memcpy(rec->stack, stack, depth * sizeof(stack[0]));
	seq = hs_registry_next_seq();
	hs_registry_publish(slot, seq); /* seq stored last */
	acct = (struct hs_sample_acct){.requested = r, .allocated = a,
				       .weight = w, .span_bytes = rec->span_bytes,
				       .proxy = proxy != NULL};
	hs_region_publish_cache();
	hs_frag_set(slot, seq, has_occ ? &occ : NULL, t);
	hs_frag_refresh_some(t);
	if (__atomic_load_n(&hs_allocs_sessions_active, __ATOMIC_RELAXED))
		hs_session_on_alloc(rec);
	hs_region_unlock();
	/* statistics after the lock (sample.h struct hs_sample_acct) */
	if (retired)
		hs_sample_account(&old_acct, -1);
	hs_sample_account(&acct, 1);
	if (old_proxy)
		hs_free_unsampled(old_proxy);

	/* Nobody else can free p before we return it: firing outside the
	 * lock cannot reorder this event after its own sample_free. */
	if (HS_PROBE_ENABLED(sample_alloc))
		HS_PROBE_SAMPLE_ALLOC(p, r, a, align, w, stack, depth, seq);
	HS_PROBE_COMPAT_ALLOC(p, r, a, w);
	return p;
fail:
	hs_region_unlock();
	if (proxy)
		hs_free_unsampled(proxy);
	return NULL;
}

static void *sample_slow(hs_sampler_t *s, size_t requested, size_t align,
			 void *grow)
{
	int64_t ctl = hs_registry_take_control();
	size_t w;
	void *p;

	if (HS_UNLIKELY(!hs_sampling_ready())) {
		/* Before the library constructor the options may not be
		 * final (environ): leave the sampler unseeded and come back
		 * on every allocation until then (a few hundred calls). */
		s->bytes_until_sample = 0;
		return NULL;
	}
	if (HS_UNLIKELY(ctl != 0))
		hs_sampling_set_period(ctl < 0 ? 0 : ctl);
	w = hs_sampler_record_slow(s, requested);
	if (HS_LIKELY(w == 0))
		return NULL;
	if (!__atomic_load_n(&hs_sampled_size, __ATOMIC_ACQUIRE) ||
	    !hs_guard_enter()) {
		hs_stat_add(HS_STAT_dropped_total, 1);
		return NULL;
	}
	p = take_sample(requested, align, w, grow);
	if (!p)
		hs_stat_add(HS_STAT_dropped_total, 1);
	hs_guard_leave();
	return p;
}

void *hs_sample_alloc_slow(hs_sampler_t *s, size_t requested, size_t align)
{
	return sample_slow(s, requested, align, NULL);
}

void *hs_sample_realloc_slow(hs_sampler_t *s, size_t requested, void *p)
{
	return sample_slow(s, requested, 0, p);
}
