# SPDX-License-Identifier: MIT
# Issue 18 gap 4: the daemon's rss and leaks endpoints take ?comm=NAME as
# the profile endpoints do (root, BPF; rss_untouched from
# rss_untouched.cmake).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME daemon_rss_comm
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_comm.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:rss_untouched>)
  set_tests_properties(daemon_rss_comm PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 120 LABELS "e2e;root;bpf;daemon;collector")
endif()
