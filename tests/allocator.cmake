# SPDX-License-Identifier: MIT
# Allocator core: cmocka unit tests per module, API contracts through the
# shared library, and real programs run under LD_PRELOAD (each preload test
# twice: HEAPSCOPE_SAMPLE_RATE=0 and the default rate).

# internals: linked statically (hidden symbols are linkable from the .a)
foreach(t size_class pagemap options page_heap thread_cache)
  add_executable(test_${t} ${CMAKE_CURRENT_SOURCE_DIR}/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE heapscope_static
    heapscope_internal_headers ${CMOCKA_LIB})
  add_test(NAME alloc_${t} COMMAND test_${t})
  set_tests_properties(alloc_${t} PROPERTIES TIMEOUT 120
    LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
endforeach()
# page heap policies need a known release floor (16 MiB), and large
# blocks in the page heap, not in the sampled region
# large blocks in the page heap (not the region): the pagemap's edges
set_tests_properties(alloc_pagemap PROPERTIES
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_REGION_BLOCK_MAX=0")
set_tests_properties(alloc_page_heap PROPERTIES
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0;HEAPSCOPE_RELEASE_RATE=16M;HEAPSCOPE_REGION_BLOCK_MAX=0")

# hs_rate_tests(PREFIX NAME LABELS ENV_DEFAULT ENV_OFF cmd...): two ctests
# running cmd, PREFIX_NAME_rate_default with the environment list
# ENV_DEFAULT and PREFIX_NAME_rate_0 with ENV_OFF (quote each list)
function(hs_rate_tests prefix name labels env_default env_off)
  foreach(rate 0 default)
    if(rate STREQUAL "default")
      set(_env "${env_default}")
    else()
      set(_env "${env_off}")
    endif()
    add_test(NAME ${prefix}_${name}_rate_${rate} COMMAND ${ARGN})
    set_tests_properties(${prefix}_${name}_rate_${rate} PROPERTIES
      TIMEOUT 300 LABELS "${labels}" ENVIRONMENT "${_env}")
  endforeach()
endfunction()

# alloc_NAME_rate_0 (sampling off) and alloc_NAME_rate_default running EXE
function(hs_alloc_rate_tests name exe)
  hs_rate_tests(alloc ${name} "unit;allocator" "HEAPSCOPE_VERBOSE=0"
    "HEAPSCOPE_SAMPLE_RATE=0" ${exe})
endfunction()

# malloc_trim gives a freed heap back, metadata included (issue 3); at
# sampling off and at the default period
add_executable(test_trim ${CMAKE_CURRENT_SOURCE_DIR}/test_trim.c)
target_compile_options(test_trim PRIVATE -fno-builtin)
target_link_libraries(test_trim PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
hs_alloc_rate_tests(trim test_trim)

# what the trim leaves of the allocator's own memory, page by page
add_executable(test_trim_meta ${CMAKE_CURRENT_SOURCE_DIR}/test_trim_meta.c)
target_compile_options(test_trim_meta PRIVATE -fno-builtin)
target_link_libraries(test_trim_meta PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
hs_alloc_rate_tests(trim_meta test_trim_meta)

add_executable(test_api_contracts ${CMAKE_CURRENT_SOURCE_DIR}/test_api_contracts.c)
target_compile_options(test_api_contracts PRIVATE -fno-builtin)
target_link_libraries(test_api_contracts PRIVATE heapscope ${CMOCKA_LIB} pthread)
hs_alloc_rate_tests(api_contracts test_api_contracts)

add_executable(cxx_containers ${CMAKE_CURRENT_SOURCE_DIR}/programs/cxx_containers.cc)
target_compile_options(cxx_containers PRIVATE -O2 -Wno-alloc-size-larger-than)
target_link_libraries(cxx_containers PRIVATE pthread)

find_program(HS_BASH bash)
# The library needs nothing but libc (issue 3, the RSS of small programs):
# libgcc's unwinder is linked in, zlib is dlopened on first gzip.
add_test(NAME alloc_needed_libc_only COMMAND ${HS_BASH} -c
  "readelf -d \"$1\" | grep NEEDED && ! readelf -d \"$1\" | grep NEEDED | grep -v libc.so.6"
  needed $<TARGET_FILE:heapscope>)
set_tests_properties(alloc_needed_libc_only PROPERTIES LABELS "unit;allocator")
find_program(HS_LS ls)
# Debian's interpreter (a pyenv shim may come first on PATH)
find_program(HS_SYS_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT HS_SYS_PYTHON3)
  find_program(HS_SYS_PYTHON3 python3)
endif()
find_program(HS_SQLITE3 sqlite3)
set(HS_PRELOAD ${CMAKE_CURRENT_SOURCE_DIR}/preload_run.sh $<TARGET_FILE:heapscope>)

# hs_preload_test(name cmd...): two ctests, preload_<name>_rate_{0,default}
function(hs_preload_test name)
  hs_rate_tests(preload ${name} "preload;allocator" "PYTHONMALLOC=malloc"
    "PYTHONMALLOC=malloc;HEAPSCOPE_SAMPLE_RATE=0" ${HS_PRELOAD} ${ARGN})
endfunction()

set(HS_PROGS ${CMAKE_CURRENT_SOURCE_DIR}/programs)
if(HS_BASH)
  hs_preload_test(bash ${HS_BASH} ${HS_PROGS}/preload_workload.sh)
endif()
if(HS_LS)
  hs_preload_test(ls ${HS_LS} -la /usr/bin)
endif()
if(HS_SYS_PYTHON3)
  hs_preload_test(python3 ${HS_SYS_PYTHON3} ${HS_PROGS}/preload_workload.py)
endif()
if(HS_SQLITE3)
  hs_preload_test(sqlite3 ${HS_SQLITE3} :memory: -init ${HS_PROGS}/preload_workload.sql .quit)
endif()
hs_preload_test(cxx_containers $<TARGET_FILE:cxx_containers>)

# The allocator's layers: every include within what its folder may use
# (allocator/README.md)
add_test(NAME alloc_layers COMMAND ${HS_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.sh
  ${CMAKE_SOURCE_DIR}/allocator)
set_tests_properties(alloc_layers PROPERTIES LABELS "unit;allocator")
