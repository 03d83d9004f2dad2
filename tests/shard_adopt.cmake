# SPDX-License-Identifier: MIT
# A shard with no partial span of a class takes an idle shard's partial
# spans before new ones (core/central_freelist.c adopt); linked with
# libheapscope.a, sampling off.
add_executable(test_shard_adopt
  ${CMAKE_CURRENT_SOURCE_DIR}/test_shard_adopt.c)
target_compile_options(test_shard_adopt PRIVATE -fno-builtin)
target_link_libraries(test_shard_adopt PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB} pthread)
add_test(NAME alloc_shard_adopt COMMAND test_shard_adopt)
set_tests_properties(alloc_shard_adopt PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
