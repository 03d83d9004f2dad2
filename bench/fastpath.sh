#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions per malloc(32)+free pair of one library, the way bench/run.sh
# counts them: callgrind Ir at 2 M pairs minus Ir at 1 M pairs, over 1 M
# (start-up cancels).  Counts, not time: the machine's load does not move it.
#
# usage: bench/fastpath.sh [LIB.so] [VAR=VALUE...]
#   LIB.so     preloaded library (default build/allocator/libheapscope.so)
#   VAR=VALUE  extra environment (e.g. HEAPSCOPE_SAMPLE_RATE=0)
# Builds bench/build/fastpath if missing.  Prints one number.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIB=${1:-$ROOT/build/allocator/libheapscope.so}
if [ $# -gt 0 ]; then shift; fi
FP=$ROOT/bench/build/fastpath
if [ ! -x "$FP" ]; then
	cmake -S "$ROOT/bench" -B "$ROOT/bench/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$ROOT/bench/build" --target fastpath >/dev/null
fi
ir() {
	env "$@" LD_PRELOAD="$LIB" valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$FP" "$N" 2>&1 >/dev/null |
		awk '/Collected :/ { print $NF }' | tail -1
}
N=1000000
a=$(ir "$@")
N=2000000
b=$(ir "$@")
[ -n "$a" ] && [ -n "$b" ] || { echo "fastpath.sh: callgrind gave no count" >&2; exit 1; }
awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f\n", (b - a) / 1e6 }'
