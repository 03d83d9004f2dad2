# SPDX-License-Identifier: MIT
# End-to-end: a -O2 -fomit-frame-pointer program preloaded with
# libheapscope.so, profiled by `heapscope record` through BPF (root).
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
