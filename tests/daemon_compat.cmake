# SPDX-License-Identifier: MIT
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
