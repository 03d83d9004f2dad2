# SPDX-License-Identifier: MIT
# Carving populates the pages it and the program write next, in one
# MADV_POPULATE_WRITE call, and stops where a seccomp filter refuses it
# (core/central_freelist.c populate_carve, base/os.c); linked with
# libheapscope.a, sampling off.
add_executable(test_carve_populate
  ${CMAKE_CURRENT_SOURCE_DIR}/test_carve_populate.c)
target_compile_options(test_carve_populate PRIVATE -fno-builtin)
target_link_libraries(test_carve_populate PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_carve_populate COMMAND test_carve_populate)
set_tests_properties(alloc_carve_populate PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
