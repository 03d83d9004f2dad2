# SPDX-License-Identifier: MIT
# The in-process API (heapscope.h) through the real library: sampler edge
# cases, snapshots, sessions, statistics, output formats, at-exit profile,
# seeds, mismatched-size delete.
add_executable(test_api ${CMAKE_CURRENT_SOURCE_DIR}/test_api.c)
# -rdynamic: the test's functions are in .dynsym, so dladdr names them
set_target_properties(test_api PROPERTIES ENABLE_EXPORTS ON)
target_compile_options(test_api PRIVATE -fno-builtin -O1)
target_link_libraries(test_api PRIVATE heapscope ${CMOCKA_LIB} pthread)
add_test(NAME api COMMAND test_api)
set_tests_properties(api PROPERTIES TIMEOUT 300 LABELS "unit;sampling;api"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_SEED=11")
