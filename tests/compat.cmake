# SPDX-License-Identifier: MIT
# Compatible probes (otel_memory / ddheap, include/heapscope/abi.h), root +
# BPF: an allocator of its own that fires them (frame pointers, so the
# BPF stack walk reaches main), and libheapscope's against its own probes.
add_executable(compat_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/compat_target.c)
target_compile_options(compat_target PRIVATE -O1 -fno-omit-frame-pointer)
add_executable(compat_lib_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/compat_lib_target.c)
target_link_libraries(compat_lib_target PRIVATE dl)

if(HEAPSCOPE_BUILD_COLLECTOR)
  foreach(provider auto ddheap)
    add_test(NAME compat_probes_${provider}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_compat.sh sdt
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:compat_target> ${provider})
    set_tests_properties(compat_probes_${provider} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
  endforeach()
  add_test(NAME compat_probes_libheapscope
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_compat.sh lib
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:compat_lib_target>)
  set_tests_properties(compat_probes_libheapscope PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "e2e;root;bpf")
endif()
