# SPDX-License-Identifier: MIT
# Central free lists and their spinlock (core/central_freelist.c,
# core/spinlock.h): linked with libheapscope.a, sampling off.
add_executable(test_central ${CMAKE_CURRENT_SOURCE_DIR}/test_central.c)
target_link_libraries(test_central PRIVATE heapscope_static
  heapscope_internal_headers ${CMOCKA_LIB})
add_test(NAME alloc_central COMMAND test_central)
set_tests_properties(alloc_central PROPERTIES TIMEOUT 120
  LABELS "unit;allocator" ENVIRONMENT "HEAPSCOPE_SAMPLE_RATE=0")

# The spinlock under ThreadSanitizer (its own malloc: only the lock is
# built in).  Not in a build that already sanitizes (ASan and TSan do not
# combine), nor with a compiler without TSan.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=thread")
set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=thread")
check_c_source_compiles("int main(void) { return 0; }" HS_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(HS_HAVE_TSAN AND NOT CMAKE_C_FLAGS MATCHES "-fsanitize")
  add_executable(test_spinlock_tsan
    ${CMAKE_CURRENT_SOURCE_DIR}/test_spinlock_tsan.c
    ${PROJECT_SOURCE_DIR}/allocator/core/spinlock.c)
  target_include_directories(test_spinlock_tsan PRIVATE
    ${PROJECT_SOURCE_DIR}/allocator)
  target_compile_options(test_spinlock_tsan PRIVATE -fsanitize=thread -O1 -g)
  target_link_options(test_spinlock_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_spinlock_tsan PRIVATE pthread)
  add_test(NAME alloc_spinlock_tsan COMMAND test_spinlock_tsan)
  set_tests_properties(alloc_spinlock_tsan PROPERTIES TIMEOUT 120
    LABELS "unit;allocator" ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1")
endif()
