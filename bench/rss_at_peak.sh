#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/rss_at_peak.sh - where one command's resident memory is at its peak,
# under each allocator (bench/rss_at_peak.c, preloaded after it): anonymous
# memory (the heap), file-backed pages per file (text, and the unwind
# tables a sampler reads), and heapscope's own statistics at that moment.
# For a command of several processes, the one with the highest peak.
# Memory, not time: the figures hold on a loaded machine.
#
#   bench/rss_at_peak.sh [--allocators a,b,...] [--runs N] [--top K] -- command [args...]
#   bench/rss_at_peak.sh --allocators glibc,heapscope,heapscope-off -- /usr/bin/gcc -O2 -c gen.c
#
# Allocators: heapscope (BUILD_DIR/allocator/libheapscope.so, BUILD_DIR
# defaults to ./build; sampling at its default period), heapscope-off,
# mimalloc, tcmalloc, jemalloc (Debian's), glibc (no preload).  Each runs
# N times (default 3, interleaved); the run with the median peak is shown,
# with its K largest files (default 3).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
ALLOCATORS=glibc,heapscope,heapscope-off,mimalloc
RUNS=3 TOP=3
usage() { sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--allocators) ALLOCATORS=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--top) TOP=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage; exit 0 ;;
	*) echo "bench/rss_at_peak.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "bench/rss_at_peak.sh: no command after -- (see --help)" >&2; exit 2; }
case $RUNS in ''|*[!0-9]*|0) echo "bench/rss_at_peak.sh: --runs wants a positive integer" >&2; exit 2 ;; esac
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -Wall -Wextra -D_GNU_SOURCE -shared -fPIC -o "$TMP/rss_at_peak.so" \
	"$ROOT/bench/rss_at_peak.c" -ldl -pthread
. "$ROOT/bench/lib.sh"
IFS=, read -r -a list <<<"$ALLOCATORS"
for a in "${list[@]}"; do
	bench_preload "$a" "$BUILD_DIR" ||
		{ echo "bench/rss_at_peak.sh: unknown allocator $a" >&2; exit 2; }
	[ -z "$PRELOAD_LIB" ] || [ -e "$PRELOAD_LIB" ] ||
		{ echo "bench/rss_at_peak.sh: $a: $PRELOAD_LIB missing (scripts/build.sh, bench/bootstrap.sh)" >&2; exit 2; }
done

# run ALLOCATOR K: one run; the report of its largest process in $TMP/$a.$k
run() {
	local a=$1 k=$2 lib env
	shift 2
	bench_preload "$a" "$BUILD_DIR"
	lib=$PRELOAD_LIB env=(${PRELOAD_ENV[@]+"${PRELOAD_ENV[@]}"})
	mkdir -p "$TMP/out.$a.$k"
	env ${env[@]+"${env[@]}"} RSS_AT_PEAK_OUT="$TMP/out.$a.$k/p" \
		LD_PRELOAD="${lib:+$lib }$TMP/rss_at_peak.so" "$@" >/dev/null ||
		echo "bench/rss_at_peak.sh: $a: the command failed (exit $?)" >&2
	local best= bp=-1 f p
	for f in "$TMP/out.$a.$k"/p.*; do
		[ -e "$f" ] || continue
		p=$(awk '$1 == "peak" { print $2 }' "$f")
		if [ "${p:-0}" -gt "$bp" ]; then bp=$p; best=$f; fi
	done
	[ -n "$best" ] && cp "$best" "$TMP/$a.$k"
	return 0
}
for ((k = 1; k <= RUNS; k++)); do
	n=${#list[@]}
	for ((i = 0; i < n; i++)); do
		run "${list[$(((i + k) % n))]}" "$k" "$@"
	done
done

printf '%-14s %9s %9s %9s  %-40s %s\n' allocator peak_KiB anon_KiB file_KiB \
	"largest files (KiB)" "heapscope at the peak (KiB)"
for a in "${list[@]}"; do
	# the run with the median peak
	pick=$(for ((k = 1; k <= RUNS; k++)); do
		[ -e "$TMP/$a.$k" ] && echo "$(awk '$1 == "peak" { print $2 }' "$TMP/$a.$k") $k"
	done | sort -n | awk '{ r[NR] = $2 } END { if (NR) print r[int((NR + 1) / 2)] }')
	if [ -z "$pick" ]; then
		printf '%-14s %9s\n' "$a" "no report"
		continue
	fi
	f=$TMP/$a.$pick
	awk -v a="$a" -v top="$TOP" '
		$1 == "peak" { peak = $2 }
		$1 == "anon" { anon = $2 }
		$1 == "file" { kib = $NF; path = $2; for (i = 3; i < NF; i++) path = path " " $i
			n = split(path, parts, "/"); files[parts[n]] += kib; file += kib }
		$1 == "heapscope" && ($2 == "in_use" || $2 == "central_free" || $2 == "pageheap_free") {
			hs = hs sprintf("%s %d ", $2, $3) }
		END {
			line = ""
			for (k = 0; k < top; k++) {
				best = ""; bk = -1
				for (p in files) if (files[p] > bk) { bk = files[p]; best = p }
				if (best == "") break
				line = line sprintf("%s %d, ", best, bk); delete files[best]
			}
			sub(/, $/, "", line)
			printf "%-14s %9d %9d %9d  %-40s %s\n", a, peak, anon, file, line, hs
		}' "$f"
done
