# SPDX-License-Identifier: MIT
# collector/: what scrapers see (issue 16 items 8, 9): the cgroup path
# parser behind /targets' container_id and systemd_unit labels (unit);
# a real Prometheus discovering the daemon's processes through
# http_sd_configs and scraping them (root, BPF, prometheus); the
# /debug/pprof/ endpoints read by go tool pprof (root, BPF, go).  Uses
# hold_100mib from daemon.cmake.  The daemon tests run serially: their
# uprobes on the build's library count as a collector in every test process.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_cgroup_ids ${CMAKE_CURRENT_SOURCE_DIR}/test_cgroup_ids.c)
  target_link_libraries(test_cgroup_ids PRIVATE hs_collector_core
    ${CMOCKA_LIB})
  add_test(NAME collector_cgroup_ids COMMAND test_cgroup_ids)

  add_test(NAME scrape_prometheus
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_scrape_prometheus.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:hold_100mib>)
  set_tests_properties(scrape_prometheus PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf;daemon"
    RUN_SERIAL TRUE)

  # Go's net/http/pprof conventions: heap/allocs types, ?seconds= deltas,
  # ?debug=1, allocs?window=, the index (root, BPF, go tool pprof)
  add_test(NAME scrape_pprof
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_scrape_pprof.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:hold_100mib>)
  set_tests_properties(scrape_pprof PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf;daemon"
    RUN_SERIAL TRUE)
endif()
