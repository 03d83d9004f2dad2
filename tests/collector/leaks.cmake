# SPDX-License-Identifier: MIT
# Leak trends (issue 18, item 2): the fit, score and store on synthetic
# series (unit); `heapscope leaks` and the daemon's
# /debug/heapscope/leaks on leak_target (a leaking, a stable and a
# churning site; root, BPF).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_leaks ${CMAKE_CURRENT_SOURCE_DIR}/test_leaks.c)
  target_link_libraries(test_leaks PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME profiles_leaks_units COMMAND test_leaks)
  set_tests_properties(profiles_leaks_units PROPERTIES LABELS "profiles;unit")
endif()

add_executable(leak_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/leak_target.c)
target_compile_options(leak_target PRIVATE -O1 -g -fno-builtin-malloc
  -fno-omit-frame-pointer -fno-optimize-sibling-calls)
if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(mode record daemon)
    add_test(NAME leaks_${mode}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_leaks.sh ${mode}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:leak_target>)
    set_tests_properties(leaks_${mode} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 90 LABELS "e2e;root;bpf;leaks")
  endforeach()
endif()
