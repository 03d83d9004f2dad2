# SPDX-License-Identifier: MIT
# Collector tests: cmocka units of the profile, folded export and registry
# parser; a root end-to-end run against the fake target (libfakeheapscope.so).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_profile ${CMAKE_CURRENT_SOURCE_DIR}/test_profile.c)
  target_link_libraries(test_profile PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME collector_profile COMMAND test_profile)

  add_executable(test_registry_parse
    ${CMAKE_CURRENT_SOURCE_DIR}/test_registry_parse.c)
  target_link_libraries(test_registry_parse PRIVATE hs_collector_core
    ${CMOCKA_LIB})
  add_test(NAME collector_registry_parse COMMAND test_registry_parse)

  # The fake allocator library: probes + registry, no malloc.
  add_library(fakeheapscope SHARED
    ${CMAKE_CURRENT_SOURCE_DIR}/programs/fake_heapscope.c)
  target_include_directories(fakeheapscope PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/programs ${CMAKE_SOURCE_DIR}/include)
  set_target_properties(fakeheapscope PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)
  add_executable(fake_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/fake_target.c)
  target_include_directories(fake_target PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/programs)
  target_link_libraries(fake_target PRIVATE fakeheapscope ${CMAKE_DL_LIBS})
  set_target_properties(fake_target PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)

  add_test(NAME collector_fake_e2e
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_collector_fake.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:fake_target>)
  set_tests_properties(collector_fake_e2e PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
endif()
