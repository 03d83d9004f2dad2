# SPDX-License-Identifier: MIT
# collector/events/: the event stream and the registry as untrusted input
# (libFuzzer), faults during a recording (ring-buffer overflow, target
# killed, SIGTERM) and the target's life (pid reuse, exec, overflow).
# Needs test_stress (reliability.cmake) and hold_100mib (daemon.cmake).
# 7. untrusted input: libFuzzer over registry.c, events.c, profile.c,
# window.c (built with clang by the script; 77 = skip without libFuzzer)
add_test(NAME rel_fuzz_collector COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh
  ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/fuzz 30)
set_tests_properties(rel_fuzz_collector PROPERTIES TIMEOUT 240
  LABELS "fuzz;collector;reliability" SKIP_RETURN_CODE 77
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

if(HEAPSCOPE_BUILD_COLLECTOR)
  # 9. faults during a recording: ring buffer overflow at period 1, target
  # killed, SIGTERM (root, BPF)
  add_test(NAME rel_collector_faults COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_collector_faults.sh
    $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:test_stress>)
  set_tests_properties(rel_collector_faults PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 240 LABELS "e2e;root;bpf;collector;reliability")
endif()

# 9. the target's life during a recording (root, BPF): pid reuse (record
# and daemon stopped across it), exec during record, a forced ring-buffer
# overflow at period 1 (~10-20 s each)
if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(m pid_reuse exec overflow)
    add_test(NAME rel_collector_${m}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_collector_lifecycle.sh ${m}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:hold_100mib>)
    set_tests_properties(rel_collector_${m} PROPERTIES SKIP_RETURN_CODE 77
      TIMEOUT 120 LABELS "e2e;root;bpf;collector;reliability" RUN_SERIAL TRUE)
  endforeach()
endif()
