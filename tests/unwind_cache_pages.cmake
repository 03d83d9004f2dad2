# SPDX-License-Identifier: MIT
# tests/unwind_cache_pages.cmake - the unwind cache's placement of return
# addresses (allocator/sampling/unwind_internal.h hs_unwind_set_at): one
# page of code on one page of the cache.
add_executable(test_unwind_cache_pages
  ${CMAKE_CURRENT_SOURCE_DIR}/test_unwind_cache_pages.c)
target_link_libraries(test_unwind_cache_pages PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME unwind_cache_pages COMMAND test_unwind_cache_pages)
set_tests_properties(unwind_cache_pages PROPERTIES TIMEOUT 60
  LABELS "unit;sampling")
