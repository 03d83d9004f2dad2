# SPDX-License-Identifier: MIT
# allocator/api/objects.c + profile_write.c: in-process profiles name the
# program's functions from its symbol table, with exact mappings and
# folded output aggregated per stack (issue 17, item 5;
# tests/test_in_process_names.sh, needs go tool pprof and binutils, not
# root).  names_target comes from collector/symbolize.cmake; exit_on_term
# makes its SIGTERM an exit(0), so HEAPSCOPE_PROFILE_AT_EXIT writes.
add_library(exit_on_term SHARED
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/exit_on_term.c)

if(HEAPSCOPE_BUILD_COLLECTOR)
  set(HS_IN_PROCESS_SYMBOLIZER $<TARGET_FILE:heapscope_cli>)
endif()
add_test(NAME in_process_names
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_in_process_names.sh
    $<TARGET_FILE:heapscope> $<TARGET_FILE:names_target>
    $<TARGET_FILE:exit_on_term> ${HS_IN_PROCESS_SYMBOLIZER})
set_tests_properties(in_process_names PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "api;e2e")

# The same reader against hostile files: the loaded library's file is
# replaced by corrupted copies (tests/test_objects_hostile.sh, python3).
add_library(objects_victim SHARED
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/objects_victim.c)
target_compile_options(objects_victim PRIVATE -O2 -g)
add_executable(objects_host ${CMAKE_CURRENT_SOURCE_DIR}/programs/objects_host.c)
target_link_libraries(objects_host PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME in_process_hostile_files
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_objects_hostile.sh
    $<TARGET_FILE:heapscope> $<TARGET_FILE:objects_host>
    $<TARGET_FILE:objects_victim>)
set_tests_properties(in_process_hostile_files PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "api;reliability")
