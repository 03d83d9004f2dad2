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

# 7-10, the collector against untrusted input, hostile targets and
# clients, faults and the target's life: tests/collector/events.cmake,
# record.cmake, daemon.cmake and target.cmake.
