# SPDX-License-Identifier: MIT
# Issue 14: safe to preload on every host.  Label "security" for the
# privilege checks; docs/reliability.md names the test behind each
# guarantee.
set(HS_SEC_DIR ${CMAKE_CURRENT_SOURCE_DIR})

# 1. secure-execution mode: a setuid-root program run by nobody, with the
# library in /etc/ld.so.preload (in a private mount namespace), ignores
# every HEAPSCOPE_* option (root; 77 = skip, a failure under CI=true)
add_executable(secure_target ${HS_SEC_DIR}/programs/secure_target.c)
target_link_libraries(secure_target PRIVATE dl)
add_test(NAME sec_setuid_preload COMMAND ${HS_SEC_DIR}/test_secure_exec.sh
  $<TARGET_FILE:heapscope> $<TARGET_FILE:secure_target>)
set_tests_properties(sec_setuid_preload PROPERTIES TIMEOUT 120
  SKIP_RETURN_CODE 77 LABELS "security;root;allocator")
