# SPDX-License-Identifier: MIT
# Where RSS went with large blocks the program never touched (issue 18
# gap 1): the heap map's parser against crafted maps (unit), and `heapscope
# rss` on a target holding 256 MiB of large blocks, a quarter touched
# (root, no BPF).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(rss_untouched ${CMAKE_CURRENT_SOURCE_DIR}/programs/rss_untouched.c)
  set_target_properties(rss_untouched PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)
  add_test(NAME collector_rss_untouched
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_unfollowed.sh
    $<TARGET_FILE:heapscope> ${CMAKE_CURRENT_SOURCE_DIR}/test_rss_untouched.sh
    $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:rss_untouched>)
  set_tests_properties(collector_rss_untouched PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 120 LABELS "e2e;root;collector")
endif()

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_heap_map_parse
    ${CMAKE_CURRENT_SOURCE_DIR}/test_heap_map_parse.c)
  target_link_libraries(test_heap_map_parse PRIVATE hs_collector_core
    ${CMOCKA_LIB})
  add_test(NAME collector_heap_map_parse COMMAND test_heap_map_parse)
endif()
