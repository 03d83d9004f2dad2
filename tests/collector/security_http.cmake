# SPDX-License-Identifier: MIT
# Issue 14 items 5 and 6: the daemon's HTTP server answers every request
# with a status (connection limit, methods, malformed queries), and who
# may read a profile (unix socket checked by SO_PEERCRED, bearer token on
# TCP).  docs/reliability.md, "The daemon's HTTP server", names each
# guarantee's test.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(http_flood ${CMAKE_CURRENT_SOURCE_DIR}/programs/http_flood.c)
  set_target_properties(http_flood PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/programs)

  # 500 clients at once, 405 + Allow, 400 for repeats and %00 (root, BPF)
  add_test(NAME daemon_http_limits
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_http_limits.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:http_flood>)
  set_tests_properties(daemon_http_limits PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 300 LABELS "e2e;root;bpf;daemon" RUN_SERIAL TRUE)

  # --token-file refusals (no root, no BPF: refused before anything opens)
  add_test(NAME security_token_file
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_security.sh token_file
      $<TARGET_FILE:heapscope_cli>)
  set_tests_properties(security_token_file PROPERTIES TIMEOUT 60
    LABELS "security;daemon")

  # unix socket: root sees all, nobody its own; TCP: 401 / 401 / 200
  add_test(NAME security_daemon_access
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_daemon_security.sh access
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:hold_100mib>)
  set_tests_properties(security_daemon_access PROPERTIES SKIP_RETURN_CODE 77
    TIMEOUT 180 LABELS "e2e;root;bpf;security;daemon" RUN_SERIAL TRUE)
endif()
