/* SPDX-License-Identifier: MIT */
/*
 * allocator/sampling_weak_stubs.c - TEMPORARY.  Weak stand-ins for the
 * sampling side (sampler.c, sampled.c, registry.c) so the core links and
 * runs before those files land.  Any strong definition overrides these.
 * DELETE THIS FILE AT INTEGRATION.
 */
#include "sampling.h"

__attribute__((weak)) uintptr_t hs_sampled_start;
__attribute__((weak)) uintptr_t hs_sampled_size;

/* Never samples: parks the counter far away so the fast path stays fast. */
__attribute__((weak)) void *hs_sample_alloc_slow(hs_sampler_t *s,
						 size_t requested, size_t align)
{
	(void)requested;
	(void)align;
	s->bytes_until_sample = (size_t)1 << 62;
	return NULL;
}

__attribute__((weak)) void hs_sampled_free(void *p, size_t size_hint)
{
	(void)p;
	(void)size_hint;
}

__attribute__((weak)) size_t hs_sampled_usable_size(const void *p)
{
	(void)p;
	return 0;
}

__attribute__((weak)) void hs_sampling_init(void)
{
}
__attribute__((weak)) void hs_sampling_fork_prepare(void)
{
}
__attribute__((weak)) void hs_sampling_fork_parent(void)
{
}
__attribute__((weak)) void hs_sampling_fork_child(void)
{
}
