# SPDX-License-Identifier: MIT
# tests/calloc_zero.cmake - calloc's zeroed memory on every path, above
# all the ones that skip the memset (core/alloc.c hs_calloc: page-heap
# spans flagged zeroed, the region's fresh pages).  Twice: large blocks
# in the page heap (REGION_BLOCK_MAX=0, the span's flag asserted too) and
# in the sampled region (the default).
add_executable(test_calloc_zero ${CMAKE_CURRENT_SOURCE_DIR}/test_calloc_zero.c)
target_compile_options(test_calloc_zero PRIVATE -fno-builtin)
target_link_libraries(test_calloc_zero PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_calloc_zero_page_heap COMMAND test_calloc_zero)
set_tests_properties(alloc_calloc_zero_page_heap PROPERTIES TIMEOUT 300
  LABELS "unit;allocator"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_REGION_BLOCK_MAX=0")
add_test(NAME alloc_calloc_zero_region COMMAND test_calloc_zero)
set_tests_properties(alloc_calloc_zero_region PROPERTIES TIMEOUT 300
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
