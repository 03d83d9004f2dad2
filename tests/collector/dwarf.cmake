# SPDX-License-Identifier: MIT
# Inline frames, stripped binaries, debuginfod, offline symbolization
# (issue 17, items 2-4).  names_target comes from symbolize.cmake.

# common/pprof_decode.c: round trip through the encoder, malformed input
add_executable(test_pprof_decode ${CMAKE_CURRENT_SOURCE_DIR}/test_pprof_decode.c)
target_link_libraries(test_pprof_decode PRIVATE heapscope_pprof
  heapscope_pprof_decode ${CMOCKA_LIB})
add_test(NAME pprof_decode COMMAND test_pprof_decode)
# libFuzzer over the decoder (the profiles `heapscope symbolize` reads are
# untrusted; clang builds it in the script; 77 = skip without libFuzzer)
add_test(NAME rel_fuzz_pprof_decode
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz_pprof.sh
    ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/fuzz 20)
set_tests_properties(rel_fuzz_pprof_decode PROPERTIES TIMEOUT 240
  LABELS "fuzz;reliability" SKIP_RETURN_CODE 77
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

if(HEAPSCOPE_BUILD_COLLECTOR)
  # record of names_target: the always_inline helper its own frame and
  # Line; stripped copies (debuglink, build-id dir in the target's mount
  # namespace); a real debuginfod on 127.0.0.1; --symbolize=none and
  # `heapscope symbolize`; the daemon, symbolizing and not (root, BPF)
  foreach(mode inline stripped debuginfod daemon offline)
    add_test(NAME symbolize_dwarf_${mode}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_dwarf.sh ${mode}
        $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
        $<TARGET_FILE:names_target>
        ${CMAKE_CURRENT_SOURCE_DIR}/programs/names_target.cpp)
    set_tests_properties(symbolize_dwarf_${mode} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 240 LABELS "e2e;root;bpf")
  endforeach()
endif()
