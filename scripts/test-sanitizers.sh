#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test-sanitizers.sh [BUILD_DIR] - the collector and the unit tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, in a build directory of
# their own (default: build-asan).  The allocator itself is left out: a
# replacement malloc and ASan's own allocator do not mix; the allocator is
# checked by its invariant checkers (hs_*_is_valid, heapscope_sampled_check)
# in the normal build.  Root tests (BPF) run when run as root.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-asan}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
start=$(date +%s)
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" >/dev/null
# only what the selected tests need: the collector, its unit tests, the
# fake allocator library and its targets (no libheapscope in them)
cmake --build "$out" -j"${JOBS:-2}" --target heapscope_cli \
	test_registry_parse test_stats_block_parse test_heap_map_parse test_rss_compute \
	test_oom_pick test_profile \
	test_pprof test_pprof_decode test_memcg test_leaks fake_target hostile_target
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$out"
rc=0
ctest --output-on-failure -R \
	'^(collector_profile|profiles_leaks_units|collector_registry_parse|collector_stats_block_parse|collector_heap_map_parse|collector_rss_compute|daemon_oom_pick|collector_memcg|pprof_encoder|pprof_decode|collector_fake_e2e|rel_collector_hostile|cli_errors|security_token_file)$' ||
	rc=$?
echo "test-sanitizers: $(( $(date +%s) - start )) s, exit $rc"
exit $rc
