# SPDX-License-Identifier: MIT
# Huge samples on transparent huge pages (region/pages.c hs_pages_set_huge)
add_executable(test_sampled_huge ${CMAKE_CURRENT_SOURCE_DIR}/test_sampled_huge.c)
target_compile_options(test_sampled_huge PRIVATE -fno-builtin)
target_link_libraries(test_sampled_huge PRIVATE heapscope
  heapscope_internal_headers ${CMOCKA_LIB})
# huge pages on (HUGEPAGE_AFTER 0), and off (-1, the default)
add_test(NAME sampled_huge COMMAND test_sampled_huge)
add_test(NAME sampled_huge_never COMMAND test_sampled_huge)
set_tests_properties(sampled_huge PROPERTIES TIMEOUT 60
  LABELS "unit;sampling" ENVIRONMENT
  "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=7;HEAPSCOPE_HUGEPAGE_AFTER=0")
set_tests_properties(sampled_huge_never PROPERTIES TIMEOUT 60
  LABELS "unit;sampling" ENVIRONMENT
  "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=7;HEAPSCOPE_HUGEPAGE_AFTER=-1")
