# SPDX-License-Identifier: MIT
# collector/daemon/: `heapscope daemon` end-to-end (root, BPF, HTTP):
# hold_100mib preloaded with libheapscope.so, profiled through
# /debug/pprof/* with go tool pprof and curl; the HTTP server against
# hostile clients.  Each test exits 77 to skip when not root (failure with
# CI=true).
add_executable(hold_100mib ${CMAKE_CURRENT_SOURCE_DIR}/programs/hold_100mib.c)
target_compile_options(hold_100mib PRIVATE -O2 -g)
set_target_properties(hold_100mib PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)

if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(t before after kill_mid_scrape container sighup_rate sigterm_dump
          lost exec)
    add_test(NAME daemon_${t}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon.sh ${t}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:hold_100mib>)
    set_tests_properties(daemon_${t} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 90 LABELS "e2e;root;bpf;daemon"
      RUN_SERIAL TRUE)
  endforeach()

  # 8. the daemon's HTTP server against hostile clients (root, BPF, ~40 s)
  add_test(NAME rel_daemon_http COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_http.sh
    $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>)
  set_tests_properties(rel_daemon_http PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 180 LABELS "e2e;root;bpf;collector;reliability")
endif()

# `heapscope daemon` on compatible probes (otel_memory), root + BPF.
# libcompat_fire.so fires otel_memory probes (a shared library, attached
# by path for every process) and daemon_compat_target links it; one target
# runs before the daemon, one starts after it.  Their profiles over HTTP
# must hold exactly the live weights fired (tests/test_daemon_compat.sh).
add_library(compat_fire SHARED
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/compat_fire.c)
target_compile_options(compat_fire PRIVATE -O1 -fno-omit-frame-pointer)
add_executable(daemon_compat_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/daemon_compat_target.c)
target_compile_options(daemon_compat_target PRIVATE -O1
  -fno-omit-frame-pointer)
target_link_libraries(daemon_compat_target PRIVATE compat_fire)

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME compat_probes_daemon
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_compat.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:compat_fire>
      $<TARGET_FILE:daemon_compat_target>)
  set_tests_properties(compat_probes_daemon PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "e2e;root;bpf;daemon")
endif()
