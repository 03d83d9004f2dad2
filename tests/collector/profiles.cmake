# SPDX-License-Identifier: MIT
# collector/profiles/: the live set, its aggregation and folded export
# (unit); profiles beyond the heap: residency (swap test), placement,
# allocs, lifetime, peak, fragmentation (issue 6).
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_profile ${CMAKE_CURRENT_SOURCE_DIR}/test_profile.c)
  target_link_libraries(test_profile PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME collector_profile COMMAND test_profile)
endif()

add_executable(residency_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/residency_target.c)
target_compile_options(residency_target PRIVATE -O1 -fno-builtin-malloc)

if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME profiles_swap
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_swap.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:residency_target>)
  set_tests_properties(profiles_swap PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "profiles;root;bpf")
endif()

# Proof of placement: sampled allocations own their pages and are never
# THP-backed; unsampled memory in a MADV_HUGEPAGE chunk can be.
add_executable(placement_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/placement_target.c)
target_include_directories(placement_target PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_compile_options(placement_target PRIVATE -O1 -fno-builtin-malloc)
target_link_libraries(placement_target PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME profiles_placement
  COMMAND sh -c "LD_PRELOAD=$0 $1; rc=$?; [ $rc = 77 ] && [ \"$CI\" = true ] && exit 1; exit $rc"
    $<TARGET_FILE:heapscope> $<TARGET_FILE:placement_target>)
# huge pages on: the target checks that a 96 MiB block gets them (off by
# default since the large mappings follow HEAPSCOPE_HUGEPAGE_AFTER)
set_tests_properties(profiles_placement PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "profiles;root"
  ENVIRONMENT "HEAPSCOPE_HUGEPAGE_AFTER=0")

# allocs / lifetime / peak profiles through `heapscope record`.
add_executable(lifetime_target
  ${CMAKE_CURRENT_SOURCE_DIR}/programs/lifetime_target.c)
target_compile_options(lifetime_target PRIVATE -O1 -fno-builtin-malloc)
target_link_libraries(lifetime_target PRIVATE ${CMAKE_DL_LIBS} pthread)
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME profiles_lifetime
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_lifetime.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:lifetime_target>)
  set_tests_properties(profiles_lifetime PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "profiles;root;bpf")
endif()

# Fragmentation: pinned spans vs churn, in-process API and collector.
add_executable(frag_target ${CMAKE_CURRENT_SOURCE_DIR}/programs/frag_target.c)
target_include_directories(frag_target PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_compile_options(frag_target PRIVATE -O1 -fno-builtin-malloc)
target_link_libraries(frag_target PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(frag_target PROPERTIES ENABLE_EXPORTS ON)
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_test(NAME profiles_fragmentation
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_fragmentation.sh
      $<TARGET_FILE:heapscope_cli> $<TARGET_FILE:heapscope>
      $<TARGET_FILE:frag_target>)
  set_tests_properties(profiles_fragmentation PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "profiles;root;bpf")
endif()

# Units: window profiles, fragmentation attribution, residency of self.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_window ${CMAKE_CURRENT_SOURCE_DIR}/test_window.c)
  target_link_libraries(test_window PRIVATE hs_collector_core ${CMOCKA_LIB})
  add_test(NAME profiles_window_units COMMAND test_window)
  set_tests_properties(profiles_window_units PROPERTIES LABELS "profiles;unit")
endif()

# Residency scan against page-by-page pagemap + kpageflags reads: small
# pages, PMD- and PTE-mapped THP, pages shared with a child; both the
# default (shape) and the all-flags kpageflags modes.
if(HEAPSCOPE_BUILD_COLLECTOR)
  add_executable(test_residency ${CMAKE_CURRENT_SOURCE_DIR}/test_residency.c)
  target_link_libraries(test_residency PRIVATE hs_collector_core)
  add_test(NAME profiles_residency COMMAND test_residency)
  set_tests_properties(profiles_residency PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS "profiles;root")
endif()
