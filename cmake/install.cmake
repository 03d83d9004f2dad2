# SPDX-License-Identifier: MIT
# Install rules (GNUInstallDirs), by target name.  Three components, one
# Debian package each (cmake/package.cmake):
#   lib        libheapscope.so.1 (SONAME) and its real file   libheapscope1
#   dev        headers, libheapscope.a, libheapscope.so link,   libheapscope-dev
#              heapscope.pc, the CMake package (heapscope::heapscope)
#   collector  the heapscope command, man pages, systemd unit,  heapscope
#              docs
# `cmake --install build [--prefix DIR]` installs all three; DESTDIR works
# too.  The daemon's default --lib is the installed SONAME link, compiled
# in from CMAKE_INSTALL_FULL_LIBDIR: configure with the prefix you install
# to (scripts/package.sh uses /usr).
include(CMakePackageConfigHelpers)

set(HS_SOVERSION ${PROJECT_VERSION_MAJOR})
set(HS_INSTALLED_LIB
  ${CMAKE_INSTALL_FULL_LIBDIR}/libheapscope.so.${HS_SOVERSION})
set(HS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/heapscope)
# systemd looks in PREFIX/lib/systemd/system for /usr and /usr/local alike
set(HEAPSCOPE_SYSTEMD_UNITDIR lib/systemd/system CACHE STRING
  "systemd unit directory, relative to the prefix")

# ------------------------------------------------------------ library

# libheapscope.so -> libheapscope.so.1 (SONAME) -> libheapscope.so.1.0.0
set_target_properties(heapscope PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${HS_SOVERSION})
set_target_properties(heapscope_static PROPERTIES EXPORT_NAME heapscope_static)
foreach(t heapscope heapscope_static)
  target_include_directories(${t} INTERFACE
    $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS heapscope EXPORT heapscopeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT lib NAMELINK_COMPONENT dev)
install(TARGETS heapscope_static EXPORT heapscopeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/heapscope
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILES_MATCHING PATTERN "*.h")

configure_file(${CMAKE_SOURCE_DIR}/cmake/heapscope.pc.in
  ${CMAKE_BINARY_DIR}/heapscope.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/heapscope.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

install(EXPORT heapscopeTargets NAMESPACE heapscope::
  DESTINATION ${HS_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/heapscopeConfig.cmake.in
  ${CMAKE_BINARY_DIR}/heapscopeConfig.cmake
  INSTALL_DESTINATION ${HS_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/heapscopeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/heapscopeConfig.cmake
  ${CMAKE_BINARY_DIR}/heapscopeConfigVersion.cmake
  DESTINATION ${HS_CMAKE_DIR} COMPONENT dev)

# ------------------------------------------------------------ collector

if(TARGET heapscope_cli)
  # The daemon's default --lib (collector/daemon/daemon_options.c): the build
  # tree's library when the build tree's binary runs, else the installed.
  target_compile_definitions(heapscope_cli PRIVATE
    HS_INSTALLED_LIB="${HS_INSTALLED_LIB}"
    HS_BUILD_EXE="$<TARGET_FILE:heapscope_cli>"
    HS_BUILD_LIB="$<TARGET_FILE:heapscope>")
  install(TARGETS heapscope_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    COMPONENT collector)

  foreach(p ${HS_MAN_PAGES})
    string(REGEX REPLACE ".*\\.([0-9])$" "\\1" sect ${p})
    install(FILES ${HS_MAN_DIR}/${p}.gz
      DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sect} COMPONENT collector)
  endforeach()

  configure_file(${CMAKE_SOURCE_DIR}/packaging/heapscope.service.in
    ${CMAKE_BINARY_DIR}/packaging/heapscope.service @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/heapscope.service
    DESTINATION ${HEAPSCOPE_SYSTEMD_UNITDIR} COMPONENT collector)

  install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE
    DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT collector)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/
    DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT collector
    FILES_MATCHING PATTERN "*.md")
endif()
