# SPDX-License-Identifier: MIT
# `heapscope daemon` end-to-end (root, BPF, HTTP): hold_100mib preloaded
# with libheapscope.so, profiled through /debug/pprof/* with go tool pprof
# and curl.  Each test exits 77 to skip when not root (failure with CI=true).
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
endif()
