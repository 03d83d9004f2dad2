# SPDX-License-Identifier: MIT
# collector/symbolize/: names as people read them (issue 17).
if(HEAPSCOPE_BUILD_COLLECTOR)
  # hs_demangle on a table of C++, Rust legacy, Rust v0 and C names (unit)
  add_executable(test_demangle ${CMAKE_CURRENT_SOURCE_DIR}/test_demangle.c)
  target_link_libraries(test_demangle PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME symbolize_demangle COMMAND test_demangle)
endif()

# A C++ program built -O2 -g with a member function in a namespace that
# allocates, profiled by `heapscope record` in folded and pprof (root, BPF).
add_executable(names_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/names_target.cpp)
target_compile_options(names_target PRIVATE -O2 -g)

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME symbolize_demangle_e2e
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_names.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:names_target>)
  set_tests_properties(symbolize_demangle_e2e PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS "e2e;root;bpf")
endif()
