# SPDX-License-Identifier: MIT
# collector/daemon/http_host.c (issue 16 item 10): the host profile,
# /debug/pprof/heap and allocs without pid=, decoded with go tool pprof:
# every followed process with its labels, per-process totals equal to the
# per-pid profiles, -tagfocus=pid=N, folded root frames, ?seconds=, and
# what a non-root unix-socket peer sees (root, BPF, go).  Uses hold_100mib
# from daemon.cmake.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME host_profile
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_host_profile.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:hold_100mib>)
  set_tests_properties(host_profile PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS "e2e;root;bpf;daemon"
    RUN_SERIAL TRUE)
endif()
