# SPDX-License-Identifier: MIT
# A shard whose last thread exits gives its empty spans and transfer-cache
# batches back (core/central_freelist.h hs_central_shard_vacated); linked
# with libheapscope.a, sampling off.
add_executable(test_shard_vacated
  ${CMAKE_CURRENT_SOURCE_DIR}/test_shard_vacated.c)
target_compile_options(test_shard_vacated PRIVATE -fno-builtin)
target_link_libraries(test_shard_vacated PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB} pthread)
add_test(NAME alloc_shard_vacated COMMAND test_shard_vacated)
set_tests_properties(alloc_shard_vacated PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
