# SPDX-License-Identifier: MIT
# Issue 18 gap 5: --lib naming a file that is not libheapscope (the
# program, libc): one line, exit 2, for every subcommand that takes --lib
# (compat_fire from daemon.cmake, fakeheapscope from target.cmake).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME cli_lib_check
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_lib_check.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:compat_fire> $<TARGET_FILE:fakeheapscope>)
  set_tests_properties(cli_lib_check PROPERTIES TIMEOUT 120
    LABELS "collector;cli")
endif()
