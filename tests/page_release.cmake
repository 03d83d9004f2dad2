# SPDX-License-Identifier: MIT
# tests/page_release.cmake - the page heap's release policy
# (allocator/core/page_release.c): the swap on fault-in.
add_executable(test_page_release
  ${CMAKE_CURRENT_SOURCE_DIR}/test_page_release.c)
target_link_libraries(test_page_release PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_page_release COMMAND test_page_release)
# the default floor (128 MiB), large blocks in the page heap
set_tests_properties(alloc_page_release PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT
  "HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_RELEASE_RATE=128M;HEAPSCOPE_REGION_BLOCK_MAX=0")
