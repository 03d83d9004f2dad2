# SPDX-License-Identifier: MIT
# Remote frees go back to the allocating thread's shard, and spans whose
# objects all came back stay on their shard (h22-remote: core/free.h,
# core/thread_cache.h hs_tc_remote_push, core/central_freelist.c
# KEEP_EMPTY); linked with libheapscope.a, sampling off.
add_executable(test_remote_owner
  ${CMAKE_CURRENT_SOURCE_DIR}/test_remote_owner.c)
target_compile_options(test_remote_owner PRIVATE -fno-builtin)
target_link_libraries(test_remote_owner PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_remote_owner COMMAND test_remote_owner)
set_tests_properties(alloc_remote_owner PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")
