# SPDX-License-Identifier: MIT
# The build's version string, for `heapscope --version`: the project
# version and, when the source is a git checkout, `git describe --always
# --dirty`.  Regenerated at every build (cmake/version_header.cmake writes
# generated/heapscope_version.h only when its text changes, so a build
# with nothing new recompiles nothing).
find_package(Git QUIET)
set(HS_VERSION_HEADER ${CMAKE_BINARY_DIR}/generated/heapscope_version.h)
add_custom_target(heapscope_version
  COMMAND ${CMAKE_COMMAND}
    -DOUT=${HS_VERSION_HEADER}
    -DVERSION=${PROJECT_VERSION}
    -DGIT=${GIT_EXECUTABLE}
    -DSRC=${CMAKE_SOURCE_DIR}
    -P ${CMAKE_SOURCE_DIR}/cmake/version_header.cmake
  BYPRODUCTS ${HS_VERSION_HEADER}
  COMMENT "Version header"
  VERBATIM)
if(TARGET heapscope_cli)
  add_dependencies(heapscope_cli heapscope_version)
  target_include_directories(heapscope_cli PRIVATE ${CMAKE_BINARY_DIR}/generated)
endif()
