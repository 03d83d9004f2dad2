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
