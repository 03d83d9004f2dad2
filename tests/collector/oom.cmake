# SPDX-License-Identifier: MIT
# collector/target/memcg.c, collector/daemon/pressure.c, oom_store.c,
# http_oom.c: pre-OOM capture
# end to end (root, BPF, cgroup v1 memory controller).  oom_grow grows
# 4 MiB every 50 ms in a memory cgroup limited to 256 MiB until the
# cgroup's OOM killer kills it; the daemon's snapshots of it are checked
# (tests/test_oom.sh).  RUN_SERIAL: it fills 256 MiB and times the growth.
add_executable(oom_grow ${CMAKE_CURRENT_SOURCE_DIR}/programs/oom_grow.c)
target_compile_options(oom_grow PRIVATE -O1 -g -fno-omit-frame-pointer)
set_target_properties(oom_grow PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)

# collector_memcg (unit): target/memcg.c on crafted /proc/PID/cgroup
# texts and a cgroup tree built in /tmp.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_memcg ${CMAKE_CURRENT_SOURCE_DIR}/test_memcg.c)
  target_link_libraries(test_memcg PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME collector_memcg COMMAND test_memcg)
endif()

# daemon_oom_victim: the victim's snapshots, listed and right, and their
# --dump-dir files; daemon_oom_bounds: --oom-keep 1, a full --dump-dir,
# another user's view (test_oom.sh says what each asserts).
if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(mode victim bounds)
    add_test(NAME daemon_oom_${mode}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_oom.sh ${mode}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:oom_grow>)
    set_tests_properties(daemon_oom_${mode} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf;daemon;oom"
      RUN_SERIAL TRUE)
  endforeach()
endif()
