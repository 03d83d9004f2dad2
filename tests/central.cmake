# SPDX-License-Identifier: MIT
# Central free lists and their spinlock (core/central_freelist.c,
# core/spinlock.h): linked with libheapscope.a, sampling off.
add_executable(test_central ${CMAKE_CURRENT_SOURCE_DIR}/test_central.c)
target_link_libraries(test_central PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_central COMMAND test_central)
set_tests_properties(alloc_central PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
