# SPDX-License-Identifier: MIT
# Issue 7 item 4: real programs under LD_PRELOAD with the same results as
# under glibc (label "realprog"; 8.5 min in all here, 2 cores at load 5-8):
#  - Debian's /usr/bin/python3 running 40 modules of CPython's regression
#    suite (libpython3.11-testsuite): same result per module and per test
#    case as glibc (fixture realprog_python3_glibc runs glibc once);
#  - gcc building this repository's allocator with cmake: byte-identical
#    objects, archive and shared library;
#  - the sqlite3 CLI on a 300,000-row workload: byte-identical output and
#    database file, integrity_check ok.
# Rates: 0 (off), default (unset), and period 1 where time allows (python3:
# a subset, every allocation sampled and unwound is 10-50x slower there;
# sqlite3: the whole workload, ~13 s; gcc: not in CI, ~3 min per build).
set(HS_RP_DIR ${CMAKE_CURRENT_SOURCE_DIR})
set(HS_RP_OUT ${CMAKE_CURRENT_BINARY_DIR}/realprog)

# Chosen: they pass under glibc on Debian 12 here, need no network or GUI,
# and take ~45 s together (CPU).  Left out: test_sqlite3 (not shipped in
# Debian's package), test_pickle / test_tarfile / test_zipfile / test_lzma
# (10-15 s each, little allocator coverage beyond the others), test_socket,
# test_ssl, test_urllib2net (network), test_tk/test_ttk (GUI), test_ast
# and test_compile (12-13 s each; kept out for time), test_subprocess /
# test_signal / test_asyncio (not tried: slow, timing-dependent).
set(HS_RP_PY_MODULES
  test_dict test_list test_set test_tuple test_sort test_bisect test_heapq
  test_deque test_collections test_itertools test_functools test_array
  test_struct test_memoryview test_bytes test_unicode test_string
  test_unicodedata test_codecs test_re test_json test_csv test_difflib
  test_long test_float test_decimal test_fractions test_math test_random
  test_statistics test_datetime test_hashlib test_zlib test_weakref test_gc
  test_enum test_dataclasses test_typing test_threading)
# period 1: small modules only (regrtest start-up alone is ~10x slower)
set(HS_RP_PY_MODULES_P1 test_bisect test_contains test_bool)

add_test(NAME realprog_python3_glibc
  COMMAND ${HS_RP_DIR}/realprog_python3.sh baseline ${HS_RP_OUT}
    ${HS_RP_PY_MODULES} ${HS_RP_PY_MODULES_P1})
set_tests_properties(realprog_python3_glibc PROPERTIES TIMEOUT 900
  LABELS "realprog;allocator" SKIP_RETURN_CODE 77
  FIXTURES_SETUP hs_rp_python3)

foreach(rate 0 default 1)
  set(_env "")
  set(_mods ${HS_RP_PY_MODULES})
  if(NOT rate STREQUAL "default")
    set(_env "HEAPSCOPE_SAMPLE_RATE=${rate}")
  endif()
  if(rate STREQUAL "1")
    set(_mods ${HS_RP_PY_MODULES_P1})
  endif()
  add_test(NAME realprog_python3_rate_${rate}
    COMMAND ${HS_RP_DIR}/realprog_python3.sh compare ${HS_RP_OUT}
      $<TARGET_FILE:heapscope> ${_mods})
  set_tests_properties(realprog_python3_rate_${rate} PROPERTIES TIMEOUT 900
    LABELS "realprog;allocator" SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED hs_rp_python3 ENVIRONMENT "${_env}")

  if(HS_SQLITE3)
    add_test(NAME realprog_sqlite3_rate_${rate}
      COMMAND ${HS_RP_DIR}/realprog_sqlite3.sh $<TARGET_FILE:heapscope>
        ${HS_SQLITE3} ${HS_RP_DIR}/programs/realprog_heavy.sql)
    set_tests_properties(realprog_sqlite3_rate_${rate} PROPERTIES TIMEOUT 600
      LABELS "realprog;allocator" ENVIRONMENT "${_env}")
  endif()

  # gcc at period 1: see docs/reliability.md (too slow for CI here)
  if(NOT rate STREQUAL "1")
    add_test(NAME realprog_gcc_rate_${rate}
      COMMAND ${HS_RP_DIR}/realprog_gcc.sh $<TARGET_FILE:heapscope>
        ${CMAKE_SOURCE_DIR})
    set_tests_properties(realprog_gcc_rate_${rate} PROPERTIES TIMEOUT 900
      LABELS "realprog;allocator" SKIP_RETURN_CODE 77
      ENVIRONMENT "${_env}")
  endif()
endforeach()
