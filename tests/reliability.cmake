# SPDX-License-Identifier: MIT
# Issue 7, the reliability and security battery: glibc contracts at
# sampling off and period 1, start-up and linking with another preloaded
# library, threads and processes (label "stress"), misuse, the collector
# against untrusted input (label "fuzz"), privilege and files, faults.
# docs/reliability.md maps each guarantee to its test here.
set(HS_REL_DIR ${CMAKE_CURRENT_SOURCE_DIR})

# hs_rel_rates(test_prefix cmd...): two ctests, <prefix>_rate_{0,1}
function(hs_rel_rates prefix timeout labels)
  foreach(rate 0 1)
    add_test(NAME ${prefix}_rate_${rate} COMMAND ${ARGN})
    set_tests_properties(${prefix}_rate_${rate} PROPERTIES TIMEOUT ${timeout}
      LABELS "${labels}" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=${rate}")
  endforeach()
endfunction()

# 1. glibc contracts
add_executable(test_glibc_contracts ${HS_REL_DIR}/test_glibc_contracts.c)
target_compile_options(test_glibc_contracts PRIVATE -fno-builtin)
target_link_libraries(test_glibc_contracts PRIVATE heapscope ${CMOCKA_LIB})
hs_rel_rates(rel_glibc_contracts 300 "unit;allocator;reliability"
  $<TARGET_FILE:test_glibc_contracts>)

# 6. misuse the allocator can see: reports on stderr, checkers after
# (libheapscope.a: the internal hs_*_is_valid checkers are linkable)
add_executable(test_misuse ${HS_REL_DIR}/test_misuse.c)
target_compile_options(test_misuse PRIVATE -fno-builtin)
target_link_libraries(test_misuse PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
hs_rel_rates(rel_misuse 120 "unit;allocator;reliability"
  $<TARGET_FILE:test_misuse>)

# 2. start-up and linking: another preloaded library that wraps mmap and
# open, both orders, sampling off and period 1; TLS size
add_library(shim_mmap SHARED ${HS_REL_DIR}/programs/shim_mmap.c)
target_link_libraries(shim_mmap PRIVATE dl)
foreach(order lib-first shim-first)
  hs_rel_rates(rel_preload_shim_${order} 120 "preload;allocator;reliability"
    ${HS_REL_DIR}/test_preload_shim.sh $<TARGET_FILE:heapscope>
    $<TARGET_FILE:shim_mmap> ${order})
endforeach()
add_test(NAME rel_tls_size COMMAND ${HS_REL_DIR}/test_tls_size.sh
  $<TARGET_FILE:heapscope>)
set_tests_properties(rel_tls_size PROPERTIES TIMEOUT 30
  LABELS "unit;allocator;reliability")

# 3. threads and processes (label "stress"): full scale at rate 0, a
# smaller scale at period 1 (every allocation sampled and unwound: ~50x
# slower on this shared machine)
add_executable(test_stress ${HS_REL_DIR}/test_stress.c)
target_link_libraries(test_stress PRIVATE heapscope pthread dl)
foreach(rate 0 1)
  if(rate EQUAL 0)
    set(_runs "fork|200" "threads|20000" "prodcons|400000")
  else()
    set(_runs "fork|20" "threads|2000" "prodcons|40000")
  endif()
  list(APPEND _runs "dlopen|300|$<TARGET_FILE:shim_mmap>" "dlopen_libz")
  foreach(s ${_runs})
    string(REPLACE "|" ";" _args "${s}")
    list(GET _args 0 _what)
    if(_what STREQUAL "dlopen_libz")
      set(_args dlopen 300 libz.so.1)
    endif()
    add_test(NAME rel_stress_${_what}_rate_${rate} COMMAND test_stress ${_args})
    set_tests_properties(rel_stress_${_what}_rate_${rate} PROPERTIES
      TIMEOUT 120 LABELS "stress;allocator;reliability"
      ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=${rate}")
  endforeach()
endforeach()

# 7. untrusted input: libFuzzer over registry.c, events.c, profile.c,
# window.c (built with clang by the script; 77 = skip without libFuzzer)
add_test(NAME rel_fuzz_collector COMMAND ${HS_REL_DIR}/fuzz/run_fuzz.sh
  ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/fuzz 30)
set_tests_properties(rel_fuzz_collector PROPERTIES TIMEOUT 240
  LABELS "fuzz;collector;reliability" SKIP_RETURN_CODE 77
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# 8-9. the collector against hostile targets and files (root, BPF)
if(TARGET fakeheapscope)
  add_executable(hostile_target ${HS_REL_DIR}/programs/hostile_target.c)
  target_include_directories(hostile_target PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(hostile_target PRIVATE fakeheapscope)
  set_target_properties(hostile_target PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)
  add_test(NAME rel_collector_hostile
    COMMAND ${HS_REL_DIR}/test_collector_hostile.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:hostile_target>
      $<TARGET_FILE:fake_target>)
  set_tests_properties(rel_collector_hostile PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 300 LABELS "e2e;root;bpf;collector;reliability")
endif()

# 8-10 need the collector (heapscope_cli)
if(HEAPSCOPE_BUILD_COLLECTOR)
# 8. the daemon's HTTP server against hostile clients (root, BPF, ~40 s)
add_test(NAME rel_daemon_http COMMAND ${HS_REL_DIR}/test_daemon_http.sh
  $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>)
set_tests_properties(rel_daemon_http PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 180 LABELS "e2e;root;bpf;collector;reliability")

# 10. USDT semaphores count collectors and return to 0 (root, BPF)
add_executable(semaphore_target ${HS_REL_DIR}/programs/semaphore_target.c)
target_link_libraries(semaphore_target PRIVATE heapscope dl)
# (on a private copy of the library: a host daemon keeps the build's at 1)
add_test(NAME rel_semaphores COMMAND ${HS_REL_DIR}/run_unfollowed.sh
  $<TARGET_FILE:heapscope> ${HS_REL_DIR}/test_semaphores.sh
  $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:semaphore_target>)
set_tests_properties(rel_semaphores PROPERTIES SKIP_RETURN_CODE 77
  TIMEOUT 240 LABELS "e2e;root;bpf;collector;reliability")

# 9. faults during a recording: ring buffer overflow at period 1, target
# killed, SIGTERM (root, BPF)
add_test(NAME rel_collector_faults COMMAND ${HS_REL_DIR}/test_collector_faults.sh
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
      COMMAND ${HS_REL_DIR}/test_collector_lifecycle.sh ${m}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:hold_100mib>)
    set_tests_properties(rel_collector_${m} PROPERTIES SKIP_RETURN_CODE 77
      TIMEOUT 120 LABELS "e2e;root;bpf;collector;reliability" RUN_SERIAL TRUE)
  endforeach()
endif()
