/* SPDX-License-Identifier: MIT */
/*
 * tests/sampled_util.h - what the tests of the sampled region read from
 * the registry and the in-process API (test_sampled.c, test_region.c).
 * Include after <cmocka.h> and heapscope's headers; programs linked with
 * the library, so the registry is this process's.
 */
#ifndef HS_TESTS_SAMPLED_UTIL_H
#define HS_TESTS_SAMPLED_UTIL_H

#include <stdint.h>

#include "heapscope/abi.h"
#include "heapscope/heapscope.h"

extern struct heapscope_registry heapscope_registry;

#define REG (&heapscope_registry)

static inline struct heapscope_record *records(void)
{
	return (struct heapscope_record *)(uintptr_t)REG->records;
}

/* Is p inside the sampled region? */
static inline int in_region(const void *p)
{
	return (uintptr_t)p - REG->region_start < REG->region_size;
}

/* The live record of p, or NULL. */
static inline const struct heapscope_record *find_record(const void *p)
{
	struct heapscope_record *r = records();

	for (uint64_t i = 0; i < REG->high_water; i++)
		if (r[i].seq != 0 && r[i].ptr == (uintptr_t)p)
			return &r[i];
	return NULL;
}

/* heapscope_get_sampling_stats(), asserted to succeed. */
static inline struct heapscope_sampling_stats stats(void)
{
	struct heapscope_sampling_stats st;

	assert_int_equal(heapscope_get_sampling_stats(&st, sizeof(st)), 0);
	return st;
}

#endif /* HS_TESTS_SAMPLED_UTIL_H */
