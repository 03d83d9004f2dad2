#!/bin/sh
# SPDX-License-Identifier: MIT
# run_fuzz_pprof.sh SRC_DIR BUILD_DIR SECONDS - builds
# tests/fuzz/fuzz_pprof_decode.c with clang -fsanitize=fuzzer,address,
# undefined over common/pprof_decode.c, then runs it for SECONDS over the
# committed corpus (tests/fuzz/corpus/pprof_decode, read-only: new inputs
# go to BUILD_DIR).  Exits 77 (skip) when clang's libFuzzer is missing.
set -u
src=$1 out=$2 secs=${3:-20}
cc=$(command -v clang-14 || command -v clang) || { echo "no clang: skip"; exit 77; }
mkdir -p "$out/fuzz-pprof-new"
if ! echo 'int LLVMFuzzerTestOneInput(const char*d,long n){return 0;}' |
	"$cc" -x c -fsanitize=fuzzer - -o "$out/fuzz-pprof-probe" 2>/dev/null; then
	echo "clang without libFuzzer (libclang-rt-14-dev): skip"
	exit 77
fi
"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$src/common" $(pkg-config --cflags zlib) \
	"$src/tests/fuzz/fuzz_pprof_decode.c" "$src/common/pprof_decode.c" \
	$(pkg-config --libs zlib) -o "$out/fuzz_pprof_decode" || exit 1
# bounded time and memory; a crash, leak, timeout or OOM fails the test
exec "$out/fuzz_pprof_decode" -max_total_time="$secs" -timeout=10 \
	-rss_limit_mb=1024 -malloc_limit_mb=600 -print_final_stats=1 \
	"$out/fuzz-pprof-new" "$src/tests/fuzz/corpus/pprof_decode"
