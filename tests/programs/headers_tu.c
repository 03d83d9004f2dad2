// SPDX-License-Identifier: MIT
/*
 * headers_tu.c - the translation unit of headers_c_cxx
 * (tests/test_headers.sh), compiled as C99, C11, C++11, C++17 and C++20.
 * all_headers.h (written by the script) includes every public header
 * twice (include guards).  Uses a macro, a struct, an enum and two
 * functions of the API, so a C++ build must also link against the C
 * symbols (extern "C"), and asserts at file scope in the user's code
 * with the header's HEAPSCOPE_STATIC_ASSERT.  Prints the sampling period
 * the library took from HEAPSCOPE_SAMPLE_RATE.
 */
#include "all_headers.h"

#include <stdio.h>

HEAPSCOPE_STATIC_ASSERT(HEAPSCOPE_MAX_FRAMES == 64, user_max_frames);
HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_registry) == 144,
			user_registry_size);

int main(void)
{
	struct heapscope_record r;
	enum heapscope_format f = HEAPSCOPE_FORMAT_FOLDED;

	r.depth = 0;
	printf("period %lld attached %d format %d depth %u\n",
	       (long long)heapscope_get_sample_period(),
	       heapscope_collector_attached() >= 0, (int)f, (unsigned)r.depth);
	return 0;
}
