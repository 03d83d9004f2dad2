// SPDX-License-Identifier: MIT
/*
 * allocator/fragmentation.c - the span occupancy behind small samples'
 * proxies (abi.h struct heapscope_record_ext), and the in-process
 * fragmentation profile (heapscope_fragmentation_profile in heapscope.h).
 *
 * The extension array runs parallel to the registry's records and is
 * published in the registry header (ext_records, ext_size), so a collector
 * reads it with process_vm_readv like the records.  Every function here
 * but the exported ones runs with the sampled lock held (sampled.c); the
 * proxy keeps its span in use, so reading the span's counters is safe
 * (they change under the size class's lock: the values are a snapshot).
 * Attribution maths: docs/profiles.md and collector/profiles/fragmentation.c.
 *
 * Only samples that hold a proxy (allocated size <= HEAPSCOPE_PROXY_MAX,
 * default 4096; sampled.c) get an extension; the others keep ext.seq 0,
 * so collectors and heapscope_fragmentation_profile leave them out.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"
#include "internal.h"
#include "pagemap.h"
#include "profile.h"
#include "registry.h"
#include "sampled.h"
#include "size_class.h"
#include "span.h"

/* Background refresh (hs_frag_refresh_some): every live slot about once
 * per REFRESH_PERIOD_NS, at most REFRESH_PER_EVENT slots per sampled
 * alloc/free, so a process sampling thousands of times a second does not
 * walk the registry on every event. */
#define REFRESH_PER_EVENT 16
#define REFRESH_PERIOD_NS 100000000ULL /* 100 ms */

static struct heapscope_record_ext *ext;
static uint64_t ext_capacity;
static hs_lazy_t ext_mem; /* ext, committed with the registry's slots */
static uint64_t refresh_cursor;
static uint64_t refresh_last_ns; /* when the background refresh last ran */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int hs_frag_init(uint64_t capacity)
{
	size_t bytes = (capacity * sizeof(*ext) + 0xFFFF) & ~(size_t)0xFFFF;

	if (hs_lazy_init(&ext_mem, bytes, 1 << 16))
		return -ENOMEM;
	ext = (struct heapscope_record_ext *)ext_mem.base;
	ext_capacity = capacity;
	heapscope_registry.ext_size = sizeof(*ext);
	__atomic_store_n(&heapscope_registry.ext_records,
			 (uint64_t)(uintptr_t)ext, __ATOMIC_RELEASE);
	return 0;
}

int hs_frag_commit(uint64_t slots)
{
	if (!ext)
		return 0;
	if (slots > ext_capacity)
		return -ENOMEM;
	return hs_lazy_commit(&ext_mem, slots * sizeof(*ext), 1 << 16);
}

/* Lock held.  Fill slot's extension from its record's proxy, stamped
 * with now (CLOCK_MONOTONIC ns). */
void hs_frag_fill(uint32_t slot, uint64_t now)
{
	const struct heapscope_record *rec;
	struct heapscope_record_ext *e;
	const hs_span_t *s;
	uint64_t seq;
	unsigned cls;

	if (!ext || slot >= ext_capacity)
		return;
	rec = hs_registry_record(slot);
	e = &ext[slot];
	seq = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE);
	/* a free slot stays untouched: its page may have been trimmed */
	if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED))
		__atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
	if (!seq || !rec->proxy)
		return;
	s = hs_pagemap_lookup((const void *)(uintptr_t)rec->proxy);
	cls = s ? __atomic_load_n(&s->size_class, __ATOMIC_RELAXED) : 0;
	if (!s || !cls || cls >= HS_NUM_CLASSES)
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->proxy_span_start = (uint64_t)(uintptr_t)hs_span_addr(s);
	e->proxy_span_bytes = hs_span_bytes(s);
	e->proxy_span_live = __atomic_load_n(&s->allocated, __ATOMIC_RELAXED);
	e->proxy_span_objects = hs_classes[cls].objects;
	e->updated_ns = now;
	__atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
}

size_t hs_frag_trim(void)
{
	return hs_trim_free_slots(
		ext, sizeof(*ext),
		__atomic_load_n(&heapscope_registry.high_water,
				__ATOMIC_RELAXED));
}

/* Lock held.  The slot is being released. */
void hs_frag_clear(uint32_t slot)
{
	if (ext && slot < ext_capacity)
		__atomic_store_n(&ext[slot].seq, 0, __ATOMIC_RELEASE);
}

/* Lock held.  Refresh n slots round robin below the high water mark. */
static void refresh(uint64_t n, uint64_t now)
{
	uint64_t hw = __atomic_load_n(&heapscope_registry.high_water,
				      __ATOMIC_RELAXED);

	if (!ext || !hw)
		return;
	if (n > hw)
		n = hw;
	for (uint64_t i = 0; i < n; i++) {
		if (refresh_cursor >= hw)
			refresh_cursor = 0;
		hs_frag_fill((uint32_t)refresh_cursor++, now);
	}
}

void hs_frag_refresh_some(uint64_t now)
{
	uint64_t hw = __atomic_load_n(&heapscope_registry.high_water,
				      __ATOMIC_RELAXED);
	uint64_t elapsed = now - refresh_last_ns, n = REFRESH_PER_EVENT;

	/* the budget accrues at hw slots per period; below one slot, keep
	 * accruing (refresh_last_ns stays) */
	if (now < refresh_last_ns)
		elapsed = 0;
	if (elapsed < REFRESH_PERIOD_NS && hw < (1ULL << 32))
		n = elapsed * hw / REFRESH_PERIOD_NS;
	if (!n)
		return;
	refresh_last_ns = now;
	refresh(n < REFRESH_PER_EVENT ? n : REFRESH_PER_EVENT, now);
}

/* ---- in-process API ---- */

HS_EXPORT int heapscope_fragmentation_refresh(void)
{
	if (!ext)
		return -ENOSYS;
	hs_sampled_lock();
	refresh(UINT64_MAX, mono_ns());
	hs_sampled_unlock();
	return 0;
}

HS_EXPORT int
heapscope_fragmentation_profile(struct heapscope_fragmentation_entry *out,
				size_t max, size_t *n)
{
	struct cls_mean {
		double cw, ctw;
	} means[HS_NUM_CLASSES];
	uint64_t hw, now;
	size_t k = 0;

	if (!n || (!out && max))
		return -EINVAL;
	*n = 0;
	if (!ext)
		return -ENOSYS;
	memset(means, 0, sizeof(means));
	hs_sampled_lock();
	refresh(UINT64_MAX, mono_ns());
	now = mono_ns();
	hw = __atomic_load_n(&heapscope_registry.high_water, __ATOMIC_RELAXED);
	/* pass 1: per size class, the mean age weighted by each sample's
	 * proxy-method bytes, so the age-weighted total equals the proxy
	 * total of the class (bytes are moved to older objects, not made) */
	for (uint64_t i = 0; i < hw; i++) {
		const struct heapscope_record *r =
			hs_registry_record((uint32_t)i);
		const struct heapscope_record_ext *e = &ext[i];
		unsigned cls;
		double c;

		if (!r->seq || e->seq != r->seq || !e->proxy_span_live ||
		    r->allocated > HS_MAX_SMALL_SIZE)
			continue;
		if ((uint64_t)e->proxy_span_live * r->allocated >
		    e->proxy_span_bytes)
			continue;
		cls = hs_size_to_class(r->allocated);
		c = (double)r->weight / ((double)r->requested + 1) *
		    (double)(e->proxy_span_bytes -
			     (uint64_t)e->proxy_span_live * r->allocated) /
		    e->proxy_span_live;
		means[cls].cw += c;
		means[cls].ctw += c * (double)(now - r->time_ns);
	}
	/* pass 2: entries */
	for (uint64_t i = 0; i < hw; i++) {
		const struct heapscope_record *r =
			hs_registry_record((uint32_t)i);
		const struct heapscope_record_ext *e = &ext[i];
		struct heapscope_fragmentation_entry *o;
		double c, share, tc;
		unsigned cls;

		if (!r->seq || e->seq != r->seq || !e->proxy_span_live ||
		    r->allocated > HS_MAX_SMALL_SIZE ||
		    (uint64_t)e->proxy_span_live * r->allocated >
			    e->proxy_span_bytes)
			continue;
		if (k >= max) {
			k++;
			continue;
		}
		cls = hs_size_to_class(r->allocated);
		c = (double)r->weight / ((double)r->requested + 1);
		share = (double)(e->proxy_span_bytes -
				 (uint64_t)e->proxy_span_live * r->allocated) /
			e->proxy_span_live;
		tc = means[cls].cw > 0 ? means[cls].ctw / means[cls].cw : 0;
		o = &out[k++];
		o->seq = r->seq;
		o->ptr = r->ptr;
		o->requested = r->requested;
		o->allocated = r->allocated;
		o->weight = r->weight;
		o->age_ns = now - r->time_ns;
		o->span_bytes = e->proxy_span_bytes;
		o->span_live = e->proxy_span_live;
		o->span_objects = e->proxy_span_objects;
		o->frag_bytes = c * share;
		o->frag_age_bytes =
			tc > 0 ? c * share * (double)(now - r->time_ns) / tc
			       : 0;
		o->depth = r->depth;
		memcpy(o->stack, r->stack, r->depth * sizeof(r->stack[0]));
	}
	hs_sampled_unlock();
	*n = k;
	return k > max ? -ENOSPC : 0;
}
