#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/profilers/run.sh - accuracy and overhead of heap profilers on one
# allocation-hammering workload (workload.c), as root on Debian 12.
#
#   bench/profilers/run.sh [--runs N] [--ops N] [--slots N]
#
# Profilers: none (glibc), heapscope off / 2 MiB / 512 KiB (in-process
# snapshot at the known point), heapscope 2 MiB with the collector
# attached (`heapscope daemon` started before the workload, so every
# sampled event goes through the probes and BPF), heaptrack (leaked at exit = live heap),
# bpftrace uprobes on every glibc malloc/free (memleak-bpfcc's method;
# memleak-bpfcc itself needs kernel headers), jemalloc prof (default
# lg_prof_sample 19 = 512 KiB, prof.dump at the known point), gperftools
# HEAPPROFILE (libtcmalloc.so.4, HeapProfilerDump at the known point).
# Writes bench/profilers/results/profilers.{md,tsv,png}: median time and
# peak-RSS ratios vs glibc without profiling, and the median relative
# error of the reported in-use heap.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=5 OPS=1000000 SLOTS=100000
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--ops) OPS=$2; shift 2 ;;
	--slots) SLOTS=$2; shift 2 ;;
	*) echo "usage: $0 [--runs N] [--ops N] [--slots N]" >&2; exit 2 ;;
	esac
done
OUT=$HERE/results TMP=$HERE/results/tmp
mkdir -p "$OUT" "$TMP"
LIB=/usr/lib/x86_64-linux-gnu
HS=${HS_LIB:-$ROOT/build-bench/allocator/libheapscope.so}
if [ ! -e "$HS" ]; then
	cmake -S "$ROOT" -B "$ROOT/build-bench" -DHEAPSCOPE_BUILD_COLLECTOR=OFF \
		-DHEAPSCOPE_BUILD_TESTS=OFF >/dev/null && cmake --build "$ROOT/build-bench" -j2 >/dev/null
fi
# the collector, from the main build (scripts/build.sh)
HSCLI=${HS_CLI:-$ROOT/build/collector/heapscope}
PORT=${HS_BENCH_PORT:-16061}
. "$HERE/daemon.sh"
gcc -O2 -I"$ROOT/include" "$HERE/workload.c" -o "$TMP/workload" -ldl || exit 1
W="$TMP/workload $OPS $SLOTS 12345"

# run NAME CMD...: prints "time_s rss_kb estimate true"
run() {
	local name=$1; shift
	local log=$TMP/$name.log est=""
	rm -f "$TMP"/je.* "$TMP"/gp.*.heap "$TMP"/ht.*
	/usr/bin/time -f "rss_kb %M" "$@" > "$log" 2> "$log.err"
	case $name in
	heaptrack) est=$(heaptrack_print -f "$TMP"/ht*.zst 2>/dev/null |
		awk '/total memory leaked/ { v=$4; u=substr(v, length(v)); n=v+0;
		     m = u=="K"?1e3:u=="M"?1e6:u=="G"?1e9:1; printf "%d", n*m }') ;;
	# heap_v2 dumps hold raw sampled counts per stack ("@ ..." then
	# "t*: objs: bytes"); jeprof's unsampling: bytes / (1 - e^(-avg/rate))
	jemalloc-prof) est=$(awk 'NR == 1 { split($0, h, "/"); rate = h[2] }
		prev ~ /^@/ && $1 == "t*:" { o = $2 + 0; b = $3 + 0;
		  if (o > 0) est += b / (1 - exp(-(b / o) / rate)) }
		{ prev = $0 } END { printf "%d", est }' "$TMP"/je.dump 2>/dev/null) ;;
	gperftools) est=$(head -1 "$TMP"/gp.0001.heap 2>/dev/null | awk '{ gsub(/[:\[]/, " "); print $4 }') ;;
	*) est=$(awk '/^estimate_bytes/ { print $2 }' "$log" "$log.err" | tail -1) ;;
	esac
	local t=$(awk '/^time_s/ { print $2 }' "$log")
	local rss=$(awk '/^rss_kb/ { print $2 }' "$log.err")
	local truth=$(awk '/^true_live_bytes/ { print $2 }' "$log")
	local mtruth=$(awk '/^true_live_malloc_bytes/ { print $2 }' "$log")
	# bpftrace sees malloc only (the bookkeeping arrays are calloc'd)
	[ "$name" = bpftrace-uprobes ] && truth=$mtruth
	echo "$name ${t:-NA} ${rss:-NA} ${est:-NA} ${truth:-NA}"
}

TSV=$OUT/profilers.tsv
echo -e "run\tprofiler\ttime_s\trss_kb\testimate\ttrue" > "$TSV"
for r in $(seq 1 "$RUNS"); do
	for name in glibc heapscope-off heapscope-2MiB heapscope-2MiB+collector \
		heapscope-512KiB heapscope-512KiB+collector heaptrack \
		bpftrace-uprobes jemalloc-prof gperftools; do
		case $name in
		glibc) line=$(run $name $W) ;;
		heapscope-off) line=$(run $name env LD_PRELOAD=$HS HEAPSCOPE_SAMPLE_RATE=0 $W) ;;
		heapscope-2MiB) line=$(run $name env LD_PRELOAD=$HS HEAPSCOPE_SAMPLE_RATE=2097152 $W) ;;
		heapscope-2MiB+collector)
			[ -x "$HSCLI" ] && start_daemon "$TMP/daemon.log" || continue
			line=$(run $name env LD_PRELOAD=$HS HEAPSCOPE_SAMPLE_RATE=2097152 $W)
			stop_daemon ;;
		heapscope-512KiB) line=$(run $name env LD_PRELOAD=$HS HEAPSCOPE_SAMPLE_RATE=524288 $W) ;;
		heapscope-512KiB+collector)
			[ -x "$HSCLI" ] && start_daemon "$TMP/daemon.log" || continue
			line=$(run $name env LD_PRELOAD=$HS HEAPSCOPE_SAMPLE_RATE=524288 $W)
			stop_daemon ;;
		heaptrack) line=$(run $name heaptrack -o "$TMP/ht" $W) ;;
		bpftrace-uprobes) line=$(run $name env BPFTRACE_MAP_KEYS_MAX=4194304 \
			bpftrace -q -c "$W" "$HERE/live.bt") ;;
		jemalloc-prof) line=$(run $name env LD_PRELOAD=$LIB/libjemalloc.so.2 \
			MALLOC_CONF=prof:true JE_DUMP=$TMP/je.dump $W) ;;
		gperftools) line=$(run $name env LD_PRELOAD=$LIB/libtcmalloc.so.4 \
			HEAPPROFILE=$TMP/gp HEAP_PROFILE_INUSE_INTERVAL=0 $W) ;;
		esac
		echo "$line" | awk -v r=$r '{ printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, $1, $2, $3, $4, $5 }' >> "$TSV"
		echo "run $r: $line" >&2
	done
done
python3 "$HERE/report.py" "$TSV" "$OUT" "ops=$OPS slots=$SLOTS runs=$RUNS"
