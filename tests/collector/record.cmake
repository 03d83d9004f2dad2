# SPDX-License-Identifier: MIT
# collector/record/: `heapscope record` end to end (root, BPF).
# A -O2 -fomit-frame-pointer program preloaded with libheapscope.so,
# profiled through BPF.
add_executable(e2e_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/e2e_target.c)
target_compile_options(e2e_target PRIVATE -O2 -fomit-frame-pointer)
target_link_libraries(e2e_target PRIVATE dl)

# The same program with the allocator linked in statically (libheapscope.a):
# the collector is pointed at the binary itself (--lib).  -rdynamic so the
# program finds heapscope_collector_attached through dlsym as it does when
# preloaded.
add_executable(e2e_target_static ${CMAKE_CURRENT_SOURCE_DIR}/programs/e2e_target.c)
target_compile_options(e2e_target_static PRIVATE -O2 -fomit-frame-pointer)
target_link_libraries(e2e_target_static PRIVATE heapscope_static dl)
set_target_properties(e2e_target_static PROPERTIES ENABLE_EXPORTS ON)

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME e2e_record_static
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e_record.sh
      $<TARGET_FILE:heapscope_cli> static $<TARGET_FILE:e2e_target_static>)
  set_tests_properties(e2e_record_static PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS "e2e;root;bpf")
  add_test(NAME e2e_record_folded
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e_record.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope> $<TARGET_FILE:e2e_target>)
  set_tests_properties(e2e_record_folded PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS "e2e;root;bpf")
endif()

# The fake target (collector/target.cmake), with a lost event.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME collector_fake_e2e
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_collector_fake.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:fake_target>)
  set_tests_properties(collector_fake_e2e PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
endif()

# 8-9. the collector against hostile targets and files (root, BPF)
if(TARGET fakeheapscope)
  add_executable(hostile_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/hostile_target.c)
  target_include_directories(hostile_target PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(hostile_target PRIVATE fakeheapscope)
  set_target_properties(hostile_target PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)
  add_test(NAME rel_collector_hostile
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_collector_hostile.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:hostile_target>
      $<TARGET_FILE:fake_target>)
  set_tests_properties(rel_collector_hostile PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 300 LABELS "e2e;root;bpf;collector;reliability")
endif()

# Compatible probes (otel_memory / ddheap, include/heapscope/abi.h), root +
# BPF: an allocator of its own that fires them (frame pointers, so the
# BPF stack walk reaches main), and libheapscope's against its own probes.
add_executable(compat_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/compat_target.c)
target_compile_options(compat_target PRIVATE -O1 -fno-omit-frame-pointer)
add_executable(compat_lib_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/compat_lib_target.c)
target_link_libraries(compat_lib_target PRIVATE dl)

if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(provider auto ddheap)
    add_test(NAME compat_probes_${provider}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_compat.sh sdt
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:compat_target> ${provider})
    set_tests_properties(compat_probes_${provider} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
  endforeach()
  add_test(NAME compat_probes_libheapscope
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_compat.sh lib
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:compat_lib_target>)
  set_tests_properties(compat_probes_libheapscope PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
endif()
