# SPDX-License-Identifier: MIT
# tests/size_class_tail.cmake - span geometry of the size classes (span
# tails; allocator/core/size_class.c's span_pages).
add_executable(test_size_class_tail
  ${CMAKE_CURRENT_SOURCE_DIR}/test_size_class_tail.c)
target_link_libraries(test_size_class_tail PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_size_class_tail COMMAND test_size_class_tail)
set_tests_properties(alloc_size_class_tail PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
