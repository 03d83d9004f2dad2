# SPDX-License-Identifier: MIT
# Where RSS went (issue 18 item 1): the statistics block reader against
# crafted and hostile blocks, the RSS table's arithmetic (unit), `heapscope
# rss` on a process holding a known heap and on a busy one (root, no
# BPF; hold_100mib from daemon.cmake), and the daemon's
# /debug/heapscope/rss and /metrics families (root, BPF).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_stats_block_parse
    ${CMAKE_CURRENT_SOURCE_DIR}/test_stats_block_parse.c)
  target_link_libraries(test_stats_block_parse PRIVATE hs_collector_core
    ${CMOCKA_LIB})
  add_test(NAME collector_stats_block_parse COMMAND test_stats_block_parse)

  add_executable(test_rss_compute ${CMAKE_CURRENT_SOURCE_DIR}/test_rss_compute.c)
  target_link_libraries(test_rss_compute PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME collector_rss_compute COMMAND test_rss_compute)

  add_executable(rss_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/rss_target.c)
  target_include_directories(rss_target PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(rss_target PRIVATE heapscope pthread
  ${CMAKE_DL_LIBS})
  set_target_properties(rss_target PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)
  add_test(NAME collector_rss COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_unfollowed.sh
    $<TARGET_FILE:heapscope> ${CMAKE_CURRENT_SOURCE_DIR}/test_rss.sh
    $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:rss_target>
    $<TARGET_FILE:fake_target> $<TARGET_FILE:hold_100mib>)
  set_tests_properties(collector_rss PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 120 LABELS "e2e;root;collector")
endif()

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME daemon_rss COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_rss.sh
    $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
    $<TARGET_FILE:rss_target>)
  set_tests_properties(daemon_rss PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 120 LABELS "e2e;root;bpf;daemon;collector")
endif()
