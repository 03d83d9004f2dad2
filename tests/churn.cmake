# SPDX-License-Identifier: MIT
# Small-object churn (issue 19): the two-level pagemap and the thread
# cache's trips to the central lists (core/pagemap.c, core/thread_cache.c,
# core/central_freelist.c); linked with libheapscope.a, sampling off.
add_executable(test_churn ${CMAKE_CURRENT_SOURCE_DIR}/test_churn.c)
target_compile_options(test_churn PRIVATE -fno-builtin)
target_link_libraries(test_churn PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_churn COMMAND test_churn)
set_tests_properties(alloc_churn PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
