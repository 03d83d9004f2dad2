# SPDX-License-Identifier: MIT
# Size classes fitted to real programs' sizes, and classes over 4 KiB a
# thread took once not kept in its cache (h22-rss: core/size_class.c,
# core/thread_cache.c ONCE_BYTES); linked with libheapscope.a, sampling
# off.
add_executable(test_class_once
  ${CMAKE_CURRENT_SOURCE_DIR}/test_class_once.c)
target_compile_options(test_class_once PRIVATE -fno-builtin)
target_link_libraries(test_class_once PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB} pthread)
add_test(NAME alloc_class_once COMMAND test_class_once)
set_tests_properties(alloc_class_once PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
