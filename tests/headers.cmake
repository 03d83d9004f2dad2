# SPDX-License-Identifier: MIT
# Issue 14 item 4: the public headers compile as C (C99, C11) and C++
# (C++11, C++17, C++20), with gcc/g++ and clang/clang++, pedantic and
# -Werror, and a program so built links against libheapscope and runs.
add_test(NAME headers_c_cxx COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_headers.sh
  ${CMAKE_SOURCE_DIR}/include $<TARGET_FILE:heapscope>
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/headers_tu.c)
set_tests_properties(headers_c_cxx PROPERTIES TIMEOUT 180
  LABELS "unit;api;headers")
