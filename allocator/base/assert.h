/* SPDX-License-Identifier: MIT */
/*
 * allocator/base/assert.h - tiered assertions (mimalloc's mi_assert,
 * mi_assert_internal, mi_assert_expensive).  HS_DEBUG selects the tiers
 * compiled in; release builds have HS_DEBUG 0 and every assertion is
 * compiled out (the expression is not evaluated).  A CMake Debug build
 * sets HS_DEBUG=3 (allocator/CMakeLists.txt).
 *
 *   hs_assert(x)            HS_DEBUG >= 1: a caller's contract (arguments,
 *                           the state a function is called in);
 *   hs_assert_internal(x)   HS_DEBUG >= 2: an invariant of the structure
 *                           at hand, O(1);
 *   hs_assert_expensive(x)  HS_DEBUG >= 3: a whole structure's checker
 *                           (hs_page_heap_is_valid, hs_central_is_valid,
 *                           hs_pages_is_valid, hs_size_class_is_valid).
 *
 * A failed assertion writes "heapscope: assertion failed: EXPR (FILE:
 * LINE)" with write(2) and aborts (hs_assert_fail, log.c).
 */
#ifndef HS_ASSERT_H
#define HS_ASSERT_H

#include "base/hs_common.h"

#ifndef HS_DEBUG
#define HS_DEBUG 0
#endif

__attribute__((noreturn, cold)) void hs_assert_fail(const char *expr,
						     const char *file,
						     int line);

#define HS_ASSERT_TIER(level, x)                                               \
	((HS_DEBUG >= (level) && HS_UNLIKELY(!(x)))                            \
		 ? hs_assert_fail(#x, __FILE__, __LINE__)                      \
		 : (void)0)

#if HS_DEBUG >= 1
#define hs_assert(x) HS_ASSERT_TIER(1, x)
#else
#define hs_assert(x) ((void)0)
#endif
#if HS_DEBUG >= 2
#define hs_assert_internal(x) HS_ASSERT_TIER(2, x)
#else
#define hs_assert_internal(x) ((void)0)
#endif
#if HS_DEBUG >= 3
#define hs_assert_expensive(x) HS_ASSERT_TIER(3, x)
#else
#define hs_assert_expensive(x) ((void)0)
#endif

#endif /* HS_ASSERT_H */
