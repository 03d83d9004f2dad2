// SPDX-License-Identifier: MIT
/*
 * allocator/sampling/registry.c - the exported registry of live sampled
 * allocations: header (the symbol `heapscope_registry`), the record array
 * in its own reservation, the slot free list, the seqlock.
 *
 * The record array, the free list links and the record extensions
 * (fragmentation.c) are address space, made writable SLOT_STEP slots at a
 * time as high_water grows: 4 Mi slots are 2.6 GiB, which strict
 * overcommit charged to every process even with MAP_NORESERVE.  A slot
 * is handed out only once all three are writable for it, and readers
 * look below high_water only.
 *
 * Consistency: writers (serialised by the region lock) make `generation`
 * odd, change records / counters, and make it even again (release).  A
 * record is written field by field with seq stored last (release); on
 * release seq is cleared first.  A reader that copies the array between
 * two equal even generations sees a consistent set; a reader that cannot
 * get one can still trust any record whose seq is non-zero and unchanged
 * before and after its copy.
 */
#include <errno.h>
#include <string.h>

#include "base/os.h"
#include "base/stats.h"
#include "sampling/fragmentation.h"
#include "sampling/registry.h"

HS_EXPORT struct heapscope_registry heapscope_registry = {
	.magic = HEAPSCOPE_REGISTRY_MAGIC,
	.version = HEAPSCOPE_REGISTRY_VERSION,
	.header_size = sizeof(struct heapscope_registry),
	.record_size = sizeof(struct heapscope_record),
	.max_frames = HEAPSCOPE_MAX_FRAMES,
	.next_seq = 1,
};

/* Slots made writable at a time: 1024 records are 644 KiB. */
#define SLOT_STEP 1024

static struct heapscope_record *records;
static uint32_t *free_next; /* slot free list links (own reservation) */
static hs_lazy_t records_mem, free_next_mem;
static uint64_t slots_committed; /* slots [0, this) writable everywhere */
static uint32_t free_head = HS_REGISTRY_NO_SLOT;

#define REG (&heapscope_registry)

int hs_registry_init(uint64_t capacity)
{
	size_t rbytes, fbytes;

	if (records)
		return 0;
	if (capacity == 0 || capacity >= HS_REGISTRY_NO_SLOT)
		return -EINVAL;
	rbytes = (capacity * sizeof(struct heapscope_record) + 0xFFFF) &
		 ~(size_t)0xFFFF;
	fbytes = (capacity * sizeof(uint32_t) + 0xFFFF) & ~(size_t)0xFFFF;
	if (hs_lazy_init(&records_mem, rbytes, 1 << 16))
		return -ENOMEM;
	if (hs_lazy_init(&free_next_mem, fbytes, 1 << 16)) {
		hs_os_unmap(records_mem.base, records_mem.size);
		return -ENOMEM;
	}
	records = (struct heapscope_record *)records_mem.base;
	free_next = (uint32_t *)free_next_mem.base;
	__atomic_store_n(&REG->capacity, capacity, __ATOMIC_RELAXED);
	__atomic_store_n(&REG->records, (uint64_t)(uintptr_t)records,
			 __ATOMIC_RELEASE);
	return 0;
}

struct heapscope_record *hs_registry_record(uint32_t slot)
{
	return &records[slot];
}

uint64_t hs_registry_next_seq(void)
{
	return __atomic_fetch_add(&REG->next_seq, 1, __ATOMIC_RELAXED);
}

uint32_t hs_registry_slot_alloc(void)
{
	uint32_t slot;

	if (!records)
		return HS_REGISTRY_NO_SLOT;
	if (free_head != HS_REGISTRY_NO_SLOT) {
		slot = free_head;
		free_head = free_next[slot];
		return slot;
	}
	if (REG->high_water >= REG->capacity)
		return HS_REGISTRY_NO_SLOT;
	if (REG->high_water >= slots_committed) {
		uint64_t n = slots_committed + SLOT_STEP;
		if (n > REG->capacity)
			n = REG->capacity;
		if (hs_lazy_commit(&records_mem,
				   n * sizeof(struct heapscope_record), 4096) ||
		    hs_lazy_commit(&free_next_mem, n * sizeof(uint32_t),
				   4096) ||
		    hs_frag_commit(n))
			return HS_REGISTRY_NO_SLOT;
		slots_committed = n;
	}
	slot = (uint32_t)REG->high_water;
	/* Readers only look below high_water; the slot's seq is still 0. */
	__atomic_store_n(&REG->high_water, REG->high_water + 1,
			 __ATOMIC_RELEASE);
	hs_stat_add(HS_STAT_record_bytes, sizeof(struct heapscope_record));
	return slot;
}

void hs_registry_slot_free(uint32_t slot)
{
	free_next[slot] = free_head;
	free_head = slot;
}

static void write_begin(void)
{
	__atomic_store_n(&REG->generation, REG->generation + 1,
			 __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(void)
{
	__atomic_store_n(&REG->generation, REG->generation + 1,
			 __ATOMIC_RELEASE);
}

void hs_registry_publish(uint32_t slot, uint64_t seq)
{
	struct heapscope_record *r = &records[slot];

	write_begin();
	__atomic_store_n(&r->seq, seq, __ATOMIC_RELEASE);
	__atomic_store_n(&REG->live, REG->live + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&REG->sampled_bytes,
			 REG->sampled_bytes + r->span_bytes, __ATOMIC_RELAXED);
	write_end();
}

void hs_registry_release(uint32_t slot)
{
	struct heapscope_record *r = &records[slot];

	write_begin();
	__atomic_store_n(&r->seq, 0, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&REG->live, REG->live - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&REG->sampled_bytes,
			 REG->sampled_bytes - r->span_bytes, __ATOMIC_RELAXED);
	write_end();
	hs_registry_slot_free(slot);
}

size_t hs_trim_free_slots(void *base, size_t elem_size, uint64_t n)
{
	const uintptr_t pg = 4096, rs = elem_size;
	uintptr_t start = (uintptr_t)base, end, run = 0, p;
	size_t done = 0;

	if (!base || !n)
		return 0;
	end = start + (uintptr_t)n * rs;
	/* base is page aligned: p walks whole pages */
	for (p = start; p < end; p += pg) {
		uint64_t i = (p - start) / rs;
		uint64_t last =
			((p + pg < end ? p + pg : end) - 1 - start) / rs;
		int used = 0;

		for (; i <= last && !used; i++)
			used = __atomic_load_n(
				       (const uint64_t *)(start + i * rs),
				       __ATOMIC_RELAXED) != 0;
		if (!used) {
			if (!run)
				run = p;
			continue;
		}
		if (run && hs_os_decommit((void *)run, p - run) == 0)
			done += p - run;
		run = 0;
	}
	if (run && hs_os_decommit((void *)run, p - run) == 0)
		done += p - run;
	return done;
}

size_t hs_registry_trim(void)
{
	return hs_trim_free_slots(records, sizeof(struct heapscope_record),
				  REG->high_water);
}

void hs_registry_set_period(int64_t period)
{
	__atomic_store_n(&REG->sample_period, period, __ATOMIC_RELEASE);
}

int64_t hs_registry_take_control(void)
{
	if (HS_LIKELY(__atomic_load_n(&REG->control_period, __ATOMIC_RELAXED) ==
		      0))
		return 0;
	return __atomic_exchange_n(&REG->control_period, 0, __ATOMIC_ACQ_REL);
}
