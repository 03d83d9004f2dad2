#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job on real input: Debian's unmodified CPython (PYTHONMALLOC=malloc)
# runs a real workload (JSON documents, an index, an in-memory SQLite
# database: ~600 MB of heap) with libheapscope.so preloaded, while
# `heapscope record` is attached through BPF.  Writes the folded heap
# profile to demo-out/python3.heap.folded, prints its top stacks, and
# compares the profile's total with the allocator's own in-use bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
LIB=$PWD/$BUILD_DIR/allocator/libheapscope.so
HS=$PWD/$BUILD_DIR/collector/heapscope
PY=/usr/bin/python3
OUT=${OUT:-demo-out}
mkdir -p "$OUT"
rm -f "$OUT"/ready*

ppid="" rpid=""
cleanup() {
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null || true
	[ -n "$ppid" ] && kill "$ppid" 2>/dev/null || true
}
trap cleanup EXIT

wait_for() { # file pid
	while [ ! -s "$1" ]; do
		kill -0 "$2" 2>/dev/null || { echo "demo: process $2 died" >&2; exit 1; }
		sleep 0.2
	done
}

echo "== 1/2: the same workload under glibc malloc (for the run time)"
PYTHONMALLOC=malloc $PY scripts/demo_workload.py "$OUT/ready.glibc" &
ppid=$!
wait_for "$OUT/ready.glibc" $ppid
kill $ppid; wait $ppid 2>/dev/null || true; ppid=""

echo "== 2/2: under libheapscope.so, profiled by heapscope record"
PYTHONMALLOC=malloc LD_PRELOAD=$LIB $PY scripts/demo_workload.py "$OUT/ready.heapscope" &
ppid=$!
"$HS" record -p $ppid --force -o "$OUT/python3.heap.folded" &
rpid=$!
wait_for "$OUT/ready.heapscope" $ppid
sleep 0.5
kill -INT $rpid
wait $rpid
rpid=""
kill $ppid; wait $ppid 2>/dev/null || true; ppid=""

read -r glibc_inuse glibc_secs <"$OUT/ready.glibc"
read -r hs_inuse hs_secs <"$OUT/ready.heapscope"
total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$OUT/python3.heap.folded")
echo
echo "== top 10 stacks (leaf last; value = estimated bytes in use)"
# awk reads all of sort's output (no head: a SIGPIPE would fail pipefail)
sort -t' ' -k2 -nr "$OUT/python3.heap.folded" |
	awk 'NR <= 10 { v = $NF; $NF = ""; n = split($0, f, ";"); s = "";
	       for (i = (n > 6 ? n - 5 : 1); i <= n; i++) s = s (s == "" ? "" : ";") f[i];
	       printf "%12.1f MiB  %s%s\n", v / 1048576, (n > 6 ? "...;" : ""), s }'
echo
awk -v t="$total" -v u="$hs_inuse" -v g="$hs_secs" -v gs="$glibc_secs" 'BEGIN {
	printf "profile total:       %.1f MiB (estimated, sampled every 2 MiB)\n", t / 1048576;
	printf "allocator in use:    %.1f MiB (mallinfo2 uordblks, exact)\n", u / 1048576;
	printf "estimate error:      %+.2f%%\n", (t - u) * 100 / u;
	printf "workload run time:   %.2f s under heapscope (profiled), %.2f s under glibc\n", g, gs }'
echo "folded profile: $OUT/python3.heap.folded (flamegraph.pl or speedscope read it)"
