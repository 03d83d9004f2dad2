# SPDX-License-Identifier: MIT
# Issue 14 item 8: every bad command line of record, daemon and rate gets
# one line naming what is wrong and what is accepted, the --help hint and
# exit status 2 (what cannot run: one line, exit 1).  No BPF needed; the
# rows that need another user run only as root.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME cli_errors
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_errors.sh
      $<TARGET_FILE:heapscope_cli>)
  set_tests_properties(cli_errors PROPERTIES TIMEOUT 120
    LABELS "collector;cli")
endif()
