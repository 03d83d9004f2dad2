#!/bin/sh
# SPDX-License-Identifier: MIT
# run_fuzz.sh SRC_DIR BUILD_DIR SECONDS - builds tests/fuzz/fuzz_collector.c
# with clang -fsanitize=fuzzer,address,undefined over the collector's
# parsing and aggregation sources, then runs it for SECONDS over the
# committed corpus (tests/fuzz/corpus/collector, read-only: new inputs go
# to BUILD_DIR).  Exits 77 (skip) when clang's libFuzzer is missing
# (Debian: clang, libclang-rt-14-dev; scripts/bootstrap.sh installs them).
set -u
src=$1 out=$2 secs=${3:-30}
cc=$(command -v clang-14 || command -v clang) || { echo "no clang: skip"; exit 77; }
mkdir -p "$out/fuzz-new"
c=$src/collector
if ! echo 'int LLVMFuzzerTestOneInput(const char*d,long n){return 0;}' |
	"$cc" -x c -fsanitize=fuzzer - -o "$out/fuzz-probe" 2>/dev/null; then
	echo "clang without libFuzzer (libclang-rt-14-dev): skip"
	exit 77
fi
"$cc" -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$c/base" -I"$c/target" -I"$c/events" -I"$c/profiles" \
	-I"$c/symbolize" -I"$c/export" -I"$src/include" -I"$src/bpf" -I"$src/common" \
	$(pkg-config --cflags libdw libelf zlib) \
	"$src/tests/fuzz/fuzz_collector.c" "$c/base/kinds.c" "$c/events/events.c" \
	"$c/target/registry.c" "$c/target/find.c" "$c/target/notes.c" \
	"$c/profiles/profile.c" \
	"$c/profiles/stack_table.c" "$c/profiles/window.c" \
	"$c/profiles/fragmentation.c" "$c/symbolize/symbolize.c" \
	"$c/symbolize/symbolize_maps.c" "$c/symbolize/symbolize_cache.c" \
	"$c/symbolize/symbolize_inline.c" "$c/symbolize/symbolize_debuginfo.c" \
	"$c/symbolize/demangle.c" \
	"$c/profiles/residency.c" "$c/target/procinfo.c" \
	"$c/export/export_pprof.c" "$src/common/pprof.c" "$src/common/pprof_wire.c" "$src/common/fragmentation.c" \
	$(pkg-config --libs libdw libelf zlib) -liberty -lm \
	-o "$out/fuzz_collector" || exit 1
# bounded time and memory; a crash, leak, timeout or OOM fails the test
exec "$out/fuzz_collector" -max_total_time="$secs" -timeout=10 \
	-rss_limit_mb=1024 -malloc_limit_mb=512 -print_final_stats=1 \
	"$out/fuzz-new" "$src/tests/fuzz/corpus/collector"
