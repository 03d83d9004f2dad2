# SPDX-License-Identifier: MIT
# collector/symbolize/symbolize_maps.c + collector/export/export_pprof.c:
# exact pprof mappings from `record` and the daemon (issue 17, item 3):
# one per executable segment as /proc/PID/maps gives it, build ids, the
# program first, deleted binaries named as they were (tests/test_mappings.sh;
# root, BPF).  names_target comes from symbolize.cmake.
add_executable(new_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/new_target.cpp)
target_compile_options(new_target PRIVATE -O2 -g)

if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(mode record daemon)
    add_test(NAME mappings_${mode}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_mappings.sh ${mode}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:names_target> $<TARGET_FILE:new_target>)
    set_tests_properties(mappings_${mode} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS "e2e;root;bpf")
  endforeach()
  set_tests_properties(mappings_daemon PROPERTIES RUN_SERIAL TRUE
    LABELS "e2e;root;bpf;daemon")
endif()
