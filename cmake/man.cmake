# SPDX-License-Identifier: MIT
# Man pages, generated at build time from the help they document, so they
# cannot drift from it (man/gen_man.sh, man/help2roff.awk):
#   heapscope(1), heapscope-COMMAND(1)   from `heapscope [COMMAND] --help`
#   libheapscope(7)                      from allocator/base/option_list.h,
#                                        through man/libheapscope_env.c
# Outputs build/man/PAGE and PAGE.gz (installed, cmake/install.cmake).
set(HS_MAN_PAGES heapscope.1 heapscope-record.1 heapscope-daemon.1
  heapscope-rate.1 heapscope-rss.1 heapscope-leaks.1 heapscope-symbolize.1
  libheapscope.7)
set(HS_MAN_DIR ${CMAKE_BINARY_DIR}/man)
# The pages' date: SOURCE_DATE_EPOCH when set (reproducible builds).
string(TIMESTAMP HS_MAN_DATE "%Y-%m-%d" UTC)

add_executable(libheapscope_env ${CMAKE_SOURCE_DIR}/man/libheapscope_env.c)
target_include_directories(libheapscope_env PRIVATE ${CMAKE_SOURCE_DIR}/allocator)
target_compile_definitions(libheapscope_env PRIVATE
  HS_INSTALLED_LIB="${CMAKE_INSTALL_FULL_LIBDIR}/libheapscope.so.${PROJECT_VERSION_MAJOR}"
  HS_DOCDIR="${CMAKE_INSTALL_FULL_DOCDIR}")

set(_outs)
foreach(p ${HS_MAN_PAGES})
  list(APPEND _outs ${HS_MAN_DIR}/${p} ${HS_MAN_DIR}/${p}.gz)
endforeach()
add_custom_command(OUTPUT ${_outs}
  COMMAND ${CMAKE_SOURCE_DIR}/man/gen_man.sh $<TARGET_FILE:heapscope_cli>
    $<TARGET_FILE:libheapscope_env> ${HS_MAN_DIR} ${PROJECT_VERSION}
    ${HS_MAN_DATE} "${PROJECT_DESCRIPTION}" ${HS_MAN_PAGES}
  DEPENDS heapscope_cli libheapscope_env ${CMAKE_SOURCE_DIR}/man/gen_man.sh
    ${CMAKE_SOURCE_DIR}/man/help2roff.awk
  COMMENT "Man pages from the help texts"
  VERBATIM)
add_custom_target(man ALL DEPENDS ${_outs})
