# SPDX-License-Identifier: MIT
# Issue 18 gap 3: which followed process a PSI wake-up snapshots (the
# rule of collector/daemon/oom_pick.c, unit), and the daemon end to end:
# two followed processes in two v1 memory cgroups, one near its limit and
# one with a larger heap far from its own, while a third cgroup's reclaim
# stalls the system (root, BPF, cgroup v1).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_oom_pick ${CMAKE_CURRENT_SOURCE_DIR}/test_oom_pick.c
    ${CMAKE_SOURCE_DIR}/collector/daemon/oom_pick.c)
  target_include_directories(test_oom_pick PRIVATE
    ${CMAKE_SOURCE_DIR}/collector/daemon)
  target_link_libraries(test_oom_pick PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME daemon_oom_pick COMMAND test_oom_pick)
endif()

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME daemon_oom_psi_pick
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_oom_psi_pick.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:oom_grow> $<TARGET_FILE:hold_100mib>)
  set_tests_properties(daemon_oom_psi_pick PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 180 LABELS "e2e;root;bpf;daemon;collector;cgroup")
endif()
