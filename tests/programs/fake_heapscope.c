// SPDX-License-Identifier: MIT
/*
 * fake_heapscope.c - libfakeheapscope.so, a stand-in for libheapscope.so in
 * the collector's tests: it defines the heapscope USDT probes (with
 * semaphores) and the exported `heapscope_registry` exactly as
 * include/heapscope/abi.h states, and lets a test program create and free
 * "sampled allocations" with chosen sizes, weights and stacks.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "heapscope/abi.h"
#include "fake_heapscope.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT unsigned short heapscope_sample_alloc_semaphore
	__attribute__((section(".probes")));
EXPORT unsigned short heapscope_sample_free_semaphore
	__attribute__((section(".probes")));
EXPORT unsigned short heapscope_rate_change_semaphore
	__attribute__((section(".probes")));

#define CAPACITY 64
static struct heapscope_record records[CAPACITY];

EXPORT struct heapscope_registry heapscope_registry = {
	.magic = HEAPSCOPE_REGISTRY_MAGIC,
	.version = HEAPSCOPE_REGISTRY_VERSION,
	.header_size = sizeof(struct heapscope_registry),
	.record_size = sizeof(struct heapscope_record),
	.max_frames = HEAPSCOPE_MAX_FRAMES,
	.capacity = CAPACITY,
	.next_seq = 1,
	.sample_period = 2097152,
};

static void write_begin(void)
{
	__atomic_fetch_add(&heapscope_registry.generation, 1, __ATOMIC_ACQ_REL);
}

static void write_end(void)
{
	__atomic_fetch_add(&heapscope_registry.generation, 1, __ATOMIC_ACQ_REL);
}

EXPORT int fake_hs_armed(void)
{
	return __atomic_load_n(&heapscope_sample_alloc_semaphore,
			       __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&heapscope_sample_free_semaphore,
			       __ATOMIC_ACQUIRE);
}

EXPORT __attribute__((noinline)) void fake_lib_frame(void)
{
	__asm__ volatile("");
}

EXPORT uint64_t fake_hs_alloc(uint64_t ptr, uint64_t requested,
			      uint64_t allocated, uint64_t weight,
			      const uint64_t *stack, uint32_t depth)
{
	struct heapscope_record *r = NULL;
	struct timespec ts;
	uint64_t seq;

	write_begin();
	heapscope_registry.records = (uint64_t)(uintptr_t)records;
	seq = heapscope_registry.next_seq++;
	for (uint64_t i = 0; i < CAPACITY; i++) {
		if (!records[i].seq) {
			r = &records[i];
			if (i + 1 > heapscope_registry.high_water)
				heapscope_registry.high_water = i + 1;
			break;
		}
	}
	if (r) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		memset(r, 0, sizeof(*r));
		r->ptr = ptr;
		r->requested = requested;
		r->allocated = allocated;
		r->weight = weight;
		r->time_ns = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
		r->depth = depth > HEAPSCOPE_MAX_FRAMES ? HEAPSCOPE_MAX_FRAMES
							: depth;
		memcpy(r->stack, stack, r->depth * sizeof(uint64_t));
		__atomic_store_n(&r->seq, seq, __ATOMIC_RELEASE);
		heapscope_registry.live++;
	}
	write_end();
	if (heapscope_sample_alloc_semaphore)
		STAP_PROBE8(heapscope, sample_alloc, ptr, requested, allocated,
			    (uint64_t)0, weight, stack, (uint64_t)depth, seq);
	return seq;
}

EXPORT void fake_hs_free(uint64_t alloc_seq, const uint64_t *stack,
			 uint32_t depth)
{
	struct heapscope_record *r = NULL;
	uint64_t seq;

	write_begin();
	seq = heapscope_registry.next_seq++;
	for (uint64_t i = 0; i < CAPACITY; i++)
		if (records[i].seq == alloc_seq)
			r = &records[i];
	if (r) {
		__atomic_store_n(&r->seq, 0, __ATOMIC_RELEASE);
		heapscope_registry.live--;
	}
	write_end();
	/* Fires before the memory could be reused, as the ABI requires. */
	if (r && heapscope_sample_free_semaphore)
		STAP_PROBE7(heapscope, sample_free, r->ptr, r->requested,
			    r->allocated, alloc_seq, stack, (uint64_t)depth,
			    seq);
}

EXPORT void fake_hs_lose_event(void)
{
	write_begin();
	heapscope_registry.next_seq++; /* as if a probe had not fired */
	write_end();
}

EXPORT void fake_hs_rate_change(int64_t new_period)
{
	int64_t old = heapscope_registry.sample_period;

	heapscope_registry.sample_period = new_period;
	if (heapscope_rate_change_semaphore)
		STAP_PROBE2(heapscope, rate_change, new_period, old);
}
