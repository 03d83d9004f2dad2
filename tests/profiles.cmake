# SPDX-License-Identifier: MIT
# Profiles beyond the heap: residency (swap test), placement, allocs,
# lifetime, peak, fragmentation (issue 6).
add_executable(residency_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/residency_target.c)
target_compile_options(residency_target PRIVATE -O1 -fno-builtin-malloc)

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME profiles_swap
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_swap.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:residency_target>)
  set_tests_properties(profiles_swap PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "profiles;root;bpf")
endif()
