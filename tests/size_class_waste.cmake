# SPDX-License-Identifier: MIT
# tests/size_class_waste.cmake - what the size classes waste: rounding of
# a request up to its class, and span tails (allocator/core/size_class.c).
add_executable(test_size_class_waste
  ${CMAKE_CURRENT_SOURCE_DIR}/test_size_class_waste.c)
target_link_libraries(test_size_class_waste PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_size_class_waste COMMAND test_size_class_waste)
set_tests_properties(alloc_size_class_waste PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
