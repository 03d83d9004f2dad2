# SPDX-License-Identifier: MIT
# Refills in an allocation streak and transfer-cache batches taken
# several at once (h21-central: core/thread_cache.c hs_tc_refill,
# core/central_freelist.c hs_central_remove_range); linked with
# libheapscope.a, sampling off.
add_executable(test_streak_refill
  ${CMAKE_CURRENT_SOURCE_DIR}/test_streak_refill.c)
target_compile_options(test_streak_refill PRIVATE -fno-builtin)
target_link_libraries(test_streak_refill PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_streak_refill COMMAND test_streak_refill)
set_tests_properties(alloc_streak_refill PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
