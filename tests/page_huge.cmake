# SPDX-License-Identifier: MIT
# tests/page_huge.cmake - transparent huge pages in the page heap
# (allocator/core/page_huge.c): advice past HEAPSCOPE_HUGEPAGE_AFTER, and
# none when it is negative; exact releases under both.
add_executable(test_page_huge ${CMAKE_CURRENT_SOURCE_DIR}/test_page_huge.c)
target_link_libraries(test_page_huge PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_page_huge COMMAND test_page_huge)
add_test(NAME alloc_page_huge_never COMMAND test_page_huge)
set_tests_properties(alloc_page_huge PROPERTIES TIMEOUT 60
  LABELS "unit;allocator" ENVIRONMENT
  "HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_REGION_BLOCK_MAX=0;HEAPSCOPE_HUGEPAGE_AFTER=0")
set_tests_properties(alloc_page_huge_never PROPERTIES TIMEOUT 60
  LABELS "unit;allocator" ENVIRONMENT
  "HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_REGION_BLOCK_MAX=0;HEAPSCOPE_HUGEPAGE_AFTER=-1")
