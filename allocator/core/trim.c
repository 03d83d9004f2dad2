/* SPDX-License-Identifier: MIT */
/*
 * allocator/core/trim.c - malloc_trim's work (trim.h): each structure
 * gives back what it holds free, in the order their dependencies need.
 */
#include <stdint.h>

#include "base/assert.h"
#include "core/init.h"
#include "core/page_heap.h"
#include "core/pagemap.h"
#include "core/span.h"
#include "core/thread_cache.h"
#include "core/trim.h"
#include "sampling.h"

size_t hs_trim(void)
{
	if (!hs_initialised)
		return 0;
	hs_tc_flush_current();
	size_t done = hs_page_heap_release(SIZE_MAX) + hs_sampled_trim();
	/* metadata: pagemap leaves first (they read span objects), then
	 * the span objects no span uses any more */
	hs_page_heap_lock();
	done += hs_pagemap_trim();
	hs_page_heap_unlock();
	done += hs_span_trim();
	hs_assert_expensive(hs_page_heap_is_valid());
	return done;
}
