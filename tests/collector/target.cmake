# SPDX-License-Identifier: MIT
# collector/target/: the registry parser against crafted buffers (unit),
# the fake target (libfakeheapscope.so: probes and registry, no malloc)
# that the record and events tests run, and the USDT semaphores that
# count attached collectors (root, BPF).
if(HEAPSCOPE_BUILD_COLLECTOR)
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

  # 10. USDT semaphores count collectors and return to 0 (root, BPF)
  add_executable(semaphore_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/semaphore_target.c)
  target_link_libraries(semaphore_target PRIVATE heapscope dl)
  # (on a private copy of the library: a host daemon keeps the build's at 1)
  add_test(NAME rel_semaphores COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_unfollowed.sh
    $<TARGET_FILE:heapscope> ${CMAKE_CURRENT_SOURCE_DIR}/test_semaphores.sh
    $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:semaphore_target>)
  set_tests_properties(rel_semaphores PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 240 LABELS "e2e;root;bpf;collector;reliability")
endif()
