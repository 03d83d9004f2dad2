# SPDX-License-Identifier: MIT
# The sampling side under concurrency: the region lock on its own
# (region/lock.c compiled into the test), and many threads sampling,
# freeing each other's samples, growing them and taking snapshots while
# readers check the registry as a collector reads it.
add_executable(test_region_lock ${CMAKE_CURRENT_SOURCE_DIR}/test_region_lock.c
  ${CMAKE_SOURCE_DIR}/allocator/region/lock.c)
target_link_libraries(test_region_lock PRIVATE heapscope_internal_headers
  ${CMOCKA_LIB} pthread)
add_test(NAME region_lock COMMAND test_region_lock)
set_tests_properties(region_lock PROPERTIES TIMEOUT 120
  LABELS "unit;sampling;stress")

add_executable(test_sampled_concurrency
  ${CMAKE_CURRENT_SOURCE_DIR}/test_sampled_concurrency.c)
target_link_libraries(test_sampled_concurrency PRIVATE heapscope
  heapscope_internal_headers ${CMOCKA_LIB} pthread)
# on a private copy of the library no host daemon follows (a collector
# attached would only read, but the test wants the process to itself)
add_test(NAME sampled_concurrency COMMAND
  ${CMAKE_CURRENT_SOURCE_DIR}/run_unfollowed.sh
  $<TARGET_FILE:heapscope> $<TARGET_FILE:test_sampled_concurrency>)
set_tests_properties(sampled_concurrency PROPERTIES TIMEOUT 300
  LABELS "unit;sampling;stress"
  ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=1;HEAPSCOPE_SAMPLE_SEED=11")
