# SPDX-License-Identifier: MIT
# tests/unwind_tables.cmake - a sampled capture gives back the unwind-table
# pages its lookups mapped (allocator/sampling/unwind_tables.c), but not
# those of an object with text relocations: libut_textrel.so, whose
# unwind_tables_textrel.c is compiled without -fPIC and linked -z notext.
add_library(ut_textrel SHARED
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/unwind_tables_lib.c
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/unwind_tables_textrel.c)
set_source_files_properties(
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/unwind_tables_textrel.c
  PROPERTIES COMPILE_OPTIONS "-fno-PIC")
target_compile_options(ut_textrel PRIVATE -O1 -fasynchronous-unwind-tables)
target_link_options(ut_textrel PRIVATE -Wl,-z,notext)

add_executable(test_unwind_tables
  ${CMAKE_CURRENT_SOURCE_DIR}/test_unwind_tables.c)
target_include_directories(ut_textrel PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/programs)
target_include_directories(test_unwind_tables PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/programs)
target_compile_options(test_unwind_tables PRIVATE -O1
  -fasynchronous-unwind-tables)
target_link_libraries(test_unwind_tables PRIVATE heapscope ut_textrel
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME unwind_tables COMMAND
  ${CMAKE_CURRENT_SOURCE_DIR}/run_unfollowed.sh
  $<TARGET_FILE:heapscope> $<TARGET_FILE:test_unwind_tables>)
set_tests_properties(unwind_tables PROPERTIES TIMEOUT 120
  LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=3")
