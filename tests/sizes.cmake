# SPDX-License-Identifier: MIT
# Issue 14 item 2: impossible sizes fail at once and commit nothing, sizes
# the kernel would back are served, under the heuristic and strict
# overcommit policies, inside a 256 MiB memory cgroup (test_sizes.sh).
# Sampling off, at the default period and at period 1 (every call sampled:
# huge samples go to the sampled region first); and sampling off with
# every large block in the region (HEAPSCOPE_REGION_BLOCK_MAX=1024G).
# RUN_SERIAL: the runs switch vm.overcommit_memory, host-wide, so no other
# test of this suite runs meanwhile.
add_executable(test_sizes ${CMAKE_CURRENT_SOURCE_DIR}/test_sizes.c)
target_compile_options(test_sizes PRIVATE -fno-builtin)
target_link_libraries(test_sizes PRIVATE heapscope)
add_executable(sizes_new ${CMAKE_CURRENT_SOURCE_DIR}/programs/sizes_new.cc)
target_compile_options(sizes_new PRIVATE -fno-builtin)
target_link_libraries(sizes_new PRIVATE heapscope)
add_executable(with_overcommit ${CMAKE_CURRENT_SOURCE_DIR}/programs/with_overcommit.c)

foreach(v "rate_0|HEAPSCOPE_SAMPLE_RATE=0"
          "rate_default|HEAPSCOPE_SAMPLE_RATE=2097152"
          "rate_1|HEAPSCOPE_SAMPLE_RATE=1"
          "region_rate_0|HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_REGION_BLOCK_MAX=1024G")
  string(FIND "${v}" "|" _bar)
  string(SUBSTRING "${v}" 0 ${_bar} _name)
  math(EXPR _bar "${_bar} + 1")
  string(SUBSTRING "${v}" ${_bar} -1 _env)
  add_test(NAME rel_sizes_${_name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_sizes.sh
    $<TARGET_FILE:test_sizes> $<TARGET_FILE:sizes_new>
    $<TARGET_FILE:with_overcommit>)
  set_tests_properties(rel_sizes_${_name} PROPERTIES TIMEOUT 120
    LABELS "allocator;reliability;root" ENVIRONMENT "${_env}"
    SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# The reservations stay address space until used, as a data limit
# (VmData) and a locked process (mlockall: VmRSS) see them
# (test_locked_memory.c; a 64 MiB heap chunk mapped writable at once made
# both ~70 MB).  At sampling off and at the default period (the sampled
# region's first step counts then).  The locked run needs CAP_IPC_LOCK.
add_executable(test_locked_memory ${CMAKE_CURRENT_SOURCE_DIR}/test_locked_memory.c)
target_link_libraries(test_locked_memory PRIVATE heapscope)
foreach(mode data locked)
  hs_rate_tests(rel locked_memory_${mode} "allocator;reliability;root"
    "HEAPSCOPE_VERBOSE=0" "HEAPSCOPE_SAMPLE_RATE=0"
    $<TARGET_FILE:test_locked_memory> ${mode})
endforeach()
set_tests_properties(rel_locked_memory_locked_rate_0
  rel_locked_memory_locked_rate_default PROPERTIES SKIP_RETURN_CODE 77)
