# SPDX-License-Identifier: MIT
# `heapscope record`'s command line and messages (issue 17, item 7):
# --value checked against --profile; pprof comments not cut; the attached
# line and the progress line on a terminal.  names_target comes from
# collector/symbolize.cmake.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME record_value_profile
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_record_ux.sh value
      $<TARGET_FILE:heapscope_cli>)
  add_test(NAME record_messages_e2e
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_record_ux.sh session
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:names_target>)
  set_tests_properties(record_messages_e2e PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
endif()
