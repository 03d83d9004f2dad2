# SPDX-License-Identifier: MIT
# cmocka unit test of the pprof encoder (common/pprof.c).
add_executable(test_pprof ${CMAKE_CURRENT_SOURCE_DIR}/test_pprof.c)
target_link_libraries(test_pprof PRIVATE heapscope_pprof ${CMOCKA_LIB})
add_test(NAME pprof_encoder COMMAND test_pprof)
