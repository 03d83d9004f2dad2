# SPDX-License-Identifier: MIT
# Installing (label "install"): `cmake --install` into a DESTDIR and the
# installed tree used as its users would (test_install.sh), the installed
# systemd unit through systemd-analyze verify (test_install_unit.sh), and
# the Debian packages built and checked with lintian (test_package.sh; a
# second build of the tree, for the prefix /usr, in build/deb-test).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME install_tree
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${CMAKE_BINARY_DIR}
      ${CMAKE_SOURCE_DIR} ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_LIBDIR}
      ${PROJECT_VERSION})
  set_tests_properties(install_tree PROPERTIES TIMEOUT 300 LABELS "install")
  add_test(NAME install_systemd_unit
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_install_unit.sh ${CMAKE_BINARY_DIR}
      ${CMAKE_INSTALL_PREFIX})
  set_tests_properties(install_systemd_unit PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS "install")
  add_test(NAME install_debian_packages
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_package.sh ${CMAKE_SOURCE_DIR}
      ${CMAKE_BINARY_DIR}/deb-test ${PROJECT_VERSION})
  set_tests_properties(install_debian_packages PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS "install;package")
endif()
