/* SPDX-License-Identifier: MIT */
/* fake_heapscope.h - the test-only API of libfakeheapscope.so. */
#ifndef FAKE_HEAPSCOPE_H
#define FAKE_HEAPSCOPE_H
#include <stdint.h>

int fake_hs_armed(void);
void fake_lib_frame(void);
/* Record a sampled allocation, fire sample_alloc; returns its seq. */
uint64_t fake_hs_alloc(uint64_t ptr, uint64_t requested, uint64_t allocated,
		       uint64_t weight, const uint64_t *stack, uint32_t depth);
/* Remove record alloc_seq, fire sample_free. */
void fake_hs_free(uint64_t alloc_seq, const uint64_t *stack, uint32_t depth);
void fake_hs_rate_change(int64_t new_period);
/* Consume one sequence number without firing: a lost event. */
void fake_hs_lose_event(void);
#endif
