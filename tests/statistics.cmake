# SPDX-License-Identifier: MIT
# The statistical battery against the real library (label "statistics").
# HEAPSCOPE_TEST_SEED picks the seeds (default 1); bounds come from the
# estimator's exact variance, so any seed must pass.
add_executable(test_statistics ${CMAKE_CURRENT_SOURCE_DIR}/test_statistics.c)
target_compile_options(test_statistics PRIVATE -fno-builtin)
target_link_libraries(test_statistics PRIVATE heapscope ${CMOCKA_LIB} m)
add_test(NAME statistics COMMAND test_statistics)
set_tests_properties(statistics PROPERTIES TIMEOUT 600
  LABELS "statistics;sampling")
