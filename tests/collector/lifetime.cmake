# SPDX-License-Identifier: MIT
# collector/profiles/window.c, the lifetime profile's readable layout
# (issue 17, item 6): shared free frames dropped, pprof types that sum.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_lifetime_layout
    ${CMAKE_CURRENT_SOURCE_DIR}/test_lifetime_layout.c)
  target_link_libraries(test_lifetime_layout PRIVATE hs_collector_core
    ${CMOCKA_LIB})
  add_test(NAME profiles_lifetime_layout COMMAND test_lifetime_layout)
endif()
