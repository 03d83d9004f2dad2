// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/fragmentation.c - the fragmentation records: the
 * span occupancy behind small samples' proxies (abi.h struct
 * heapscope_record_ext), kept fresh in the background.  The in-process
 * profile built on them is api/fragmentation_api.c; the attribution
 * formula, shared with the collector, is common/fragmentation.c.
 *
 * The extension array runs parallel to the registry's records and is
 * published in the registry header (ext_records, ext_size), so a collector
 * reads it with process_vm_readv like the records.  Every function here
 * but hs_frag_init runs with the region lock held (region/region.h); the
 * proxy keeps its span in use, so reading the span's counters is safe
 * (they change under the size class's lock: the values are a snapshot,
 * core/core.h hs_central_occupancy).
 *
 * Only samples that hold a proxy (allocated size <= HEAPSCOPE_PROXY_MAX,
 * default 4096; sample.c) get an extension; the others keep ext.seq 0,
 * so collectors and heapscope_fragmentation_profile leave them out.
 */
#include <errno.h>

#include "base/os.h"
#include "core/core.h"
#include "heapscope/abi.h"
#include "sampling/fragmentation.h"
#include "sampling/registry.h"

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

bool hs_frag_occupancy(const void *proxy, struct hs_span_occupancy *o)
{
	return ext && hs_central_occupancy(proxy, o);
}

void hs_frag_set(uint32_t slot, uint64_t seq,
		 const struct hs_span_occupancy *o, uint64_t now)
{
	struct heapscope_record_ext *e;

	if (!ext || slot >= ext_capacity)
		return;
	e = &ext[slot];
	/* a free slot stays untouched: its page may have been trimmed */
	if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED))
		__atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
	if (!seq || !o)
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->proxy_span_start = o->start;
	e->proxy_span_bytes = o->bytes;
	e->proxy_span_live = o->live;
	e->proxy_span_objects = o->objects;
	e->updated_ns = now;
	__atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
}

/* Lock held.  Fill slot's extension from its record's proxy, stamped
 * with now (CLOCK_MONOTONIC ns). */
static void fill(uint32_t slot, uint64_t now)
{
	const struct heapscope_record *rec = hs_registry_record(slot);
	uint64_t seq = __atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE);
	struct hs_span_occupancy o;
	bool got = seq && rec->proxy &&
		   hs_central_occupancy((const void *)(uintptr_t)rec->proxy, &o);

	hs_frag_set(slot, seq, got ? &o : NULL, now);
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
		fill((uint32_t)refresh_cursor++, now);
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

const struct heapscope_record_ext *hs_frag_records(void)
{
	return ext;
}

void hs_frag_refresh_all(uint64_t now)
{
	refresh(UINT64_MAX, now);
}
