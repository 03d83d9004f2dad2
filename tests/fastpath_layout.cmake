# SPDX-License-Identifier: MIT
# The fast paths' offsets (h21-fastpath): the size -> class table and the
# pagemap's entries carry each class's thread-cache list offset
# (core/size_class.h, core/pagemap.h, core/thread_cache.h); linked with
# libheapscope.a, sampling off.
add_executable(test_fastpath_layout
  ${CMAKE_CURRENT_SOURCE_DIR}/test_fastpath_layout.c)
target_compile_options(test_fastpath_layout PRIVATE -fno-builtin)
target_link_libraries(test_fastpath_layout PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_fastpath_layout COMMAND test_fastpath_layout)
set_tests_properties(alloc_fastpath_layout PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")

# The fast paths and the common slow paths start 64-byte lines (HS_HOT):
# their place in their lines no longer moves with the rest of the library.
add_test(NAME alloc_hot_layout COMMAND
  ${CMAKE_CURRENT_SOURCE_DIR}/test_hot_layout.sh $<TARGET_FILE:heapscope>)
set_tests_properties(alloc_hot_layout PROPERTIES TIMEOUT 60
  LABELS "unit;allocator")
