# SPDX-License-Identifier: MIT
# Issue 14 item 3: libheapscope.so can be dlopen'ed by a process whose
# other libraries already took static TLS (its own initial-exec TLS is
# at most 256 bytes: rel_tls_size in reliability.cmake checks the size).
add_library(tls_plugin SHARED ${CMAKE_CURRENT_SOURCE_DIR}/programs/tls_plugin.c)
set_target_properties(tls_plugin PROPERTIES C_VISIBILITY_PRESET hidden)
add_executable(dlopen_tls_host
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/dlopen_tls_host.c)
target_include_directories(dlopen_tls_host PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(dlopen_tls_host PRIVATE dl pthread)
# sampling off, the default period, and every allocation sampled
foreach(rate 0 default 1)
  add_test(NAME tls_dlopen_after_static_tls_rate_${rate}
    COMMAND dlopen_tls_host $<TARGET_FILE:tls_plugin> $<TARGET_FILE:heapscope>)
  if(rate STREQUAL "default")
    set(_env "HEAPSCOPE_VERBOSE=0") # the period as the options give it
  else()
    set(_env "HEAPSCOPE_SAMPLE_RATE=${rate}")
  endif()
  set_tests_properties(tls_dlopen_after_static_tls_rate_${rate} PROPERTIES
    TIMEOUT 120 LABELS "unit;allocator;reliability" ENVIRONMENT "${_env}")
endforeach()
