# SPDX-License-Identifier: MIT
# Sampling side: the sampler maths (sampler.c compiled into the test, core
# stubbed) and the sampled region / registry through the real library.
add_executable(test_sampler ${CMAKE_CURRENT_SOURCE_DIR}/test_sampler.c
  ${CMAKE_SOURCE_DIR}/allocator/sampling/sampler.c)
target_link_libraries(test_sampler PRIVATE heapscope_internal_headers
  ${CMOCKA_LIB} m)
add_test(NAME sampler COMMAND test_sampler)
set_tests_properties(sampler PROPERTIES TIMEOUT 120
  LABELS "unit;sampling;statistics")

if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/test_sampled.c)
add_executable(test_sampled ${CMAKE_CURRENT_SOURCE_DIR}/test_sampled.c)
target_link_libraries(test_sampled PRIVATE heapscope heapscope_internal_headers
  ${CMOCKA_LIB} pthread m)
# on a private copy of the library that no host daemon follows: the
# no-collector assertions hold (tests/run_unfollowed.sh); the same
# program with a daemon attached is daemon_host_sampled (security.cmake)
add_test(NAME sampled COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_unfollowed.sh
  $<TARGET_FILE:heapscope> $<TARGET_FILE:test_sampled>)
set_tests_properties(sampled PROPERTIES TIMEOUT 300 LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=7")
add_test(NAME sampled_cache_eviction COMMAND test_sampled)
set_tests_properties(sampled_cache_eviction PROPERTIES TIMEOUT 60
  LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLED_CACHE=192K")
add_test(NAME sampled_cache_decay COMMAND test_sampled)
set_tests_properties(sampled_cache_decay PROPERTIES TIMEOUT 60
  LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLED_CACHE=1M")
add_test(NAME sampled_cache_off COMMAND test_sampled)
set_tests_properties(sampled_cache_off PROPERTIES TIMEOUT 60
  LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLED_CACHE=0")
# Proxies only up to HEAPSCOPE_PROXY_MAX (default 4096, tested by
# `sampled`): widened to every small class, and off.
add_test(NAME sampled_proxy_256k COMMAND test_sampled)
set_tests_properties(sampled_proxy_256k PROPERTIES TIMEOUT 60
  LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=7;HEAPSCOPE_PROXY_MAX=256K")
add_test(NAME sampled_proxy_none COMMAND test_sampled)
set_tests_properties(sampled_proxy_none PROPERTIES TIMEOUT 60
  LABELS "unit;sampling"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=7;HEAPSCOPE_PROXY_MAX=0")
# Large unsampled blocks in the sampled region (sampled.c hs_region_*)
add_executable(test_region ${CMAKE_CURRENT_SOURCE_DIR}/test_region.c)
target_compile_options(test_region PRIVATE -fno-builtin)
target_link_libraries(test_region PRIVATE heapscope heapscope_internal_headers
  ${CMOCKA_LIB})
add_test(NAME sampled_region COMMAND test_region)
set_tests_properties(sampled_region PROPERTIES TIMEOUT 60
  LABELS "unit;sampling;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
endif()
