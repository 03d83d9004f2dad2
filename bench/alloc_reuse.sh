#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/alloc_reuse.sh - where each allocator's memory was before it handed
# it out, for one command (bench/alloc_reuse.c: calloc bytes on never-used
# pages; bytes on pages last handed to another thread).  Placement counts,
# not time: they hold on a loaded machine.
#
#   bench/alloc_reuse.sh [--allocators a,b,...] -- command [args...]
#   bench/alloc_reuse.sh -- /path/to/rptest 2 0 1 2 500 1000 100 8 16000
#
# Allocators: heapscope (BUILD_DIR/allocator/libheapscope.so, BUILD_DIR
# defaults to ./build; sampling at its default period), heapscope-off,
# mimalloc, tcmalloc, jemalloc (Debian's), glibc (no preload).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
ALLOCATORS=heapscope,heapscope-off,mimalloc,tcmalloc,jemalloc,glibc
usage() { sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--allocators) ALLOCATORS=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage; exit 0 ;;
	*) echo "bench/alloc_reuse.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "bench/alloc_reuse.sh: no command after -- (see --help)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -Wall -Wextra -D_GNU_SOURCE -shared -fPIC -o "$TMP/alloc_reuse.so" \
	"$ROOT/bench/alloc_reuse.c" -ldl -pthread
. "$ROOT/bench/lib.sh"
printf '%-14s %12s %10s %14s %10s\n' allocator calloc_MB fresh_% all_MB other_thr_%
IFS=, read -r -a list <<<"$ALLOCATORS"
for a in "${list[@]}"; do
	bench_preload "$a" "$BUILD_DIR" ||
		{ echo "bench/alloc_reuse.sh: unknown allocator $a" >&2; exit 2; }
	lib=$PRELOAD_LIB env=(${PRELOAD_ENV[@]+"${PRELOAD_ENV[@]}"})
	if [ -n "$lib" ] && [ ! -e "$lib" ]; then
		echo "bench/alloc_reuse.sh: $a: $lib missing (scripts/build.sh, bench/bootstrap.sh)" >&2
		continue
	fi
	env ${env[@]+"${env[@]}"} LD_PRELOAD="$TMP/alloc_reuse.so${lib:+ $lib}" "$@" \
		>"$TMP/out" 2>"$TMP/err" || echo "bench/alloc_reuse.sh: $a: the command failed" >&2
	line=$(grep '^alloc_reuse:' "$TMP/err" | tail -1)
	# fields: 6 calloc bytes, 11 "(fresh %", 15 all bytes, 24 "(other-thread %"
	awk -v a="$a" '{ printf "%-14s %12.1f %10s %14.1f %10s\n", a, $6 / 1e6, substr($11, 2), $15 / 1e6, substr($24, 2) }' <<<"$line"
done
