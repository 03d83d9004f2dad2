#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Residency scan benchmark (not a test): builds bench_residency against the
# collector's residency.c and runs it preloaded with libheapscope.so at the
# default 2 MiB sampling period.
# Usage: [GAPS=64,256] run.sh [BUILD_DIR] [HEAP_MIB] [RUNS]
# RUNS scans per mode (default 51); GAPS: kpageflags merge gaps tried in
# the all-flags mode.  Root gives PFNs and /proc/kpageflags; otherwise only
# pagemap is read.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
mib=${2:-1024}
runs=${3:-51}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$root/collector/profiles" \
	-I"$root/collector/base" -I"$root/include" \
	-o "$out/bench_residency" "$here/bench_residency.c" \
	"$root/collector/profiles/residency.c" \
	"$root/collector/profiles/profile.c" \
	"$root/collector/profiles/stack_table.c" -ldl
HEAPSCOPE_SAMPLE_RATE=${HEAPSCOPE_SAMPLE_RATE:-2097152} HEAPSCOPE_SAMPLE_SEED=7 \
	LD_PRELOAD="$build/allocator/libheapscope.so" ${WRAP:-} "$out/bench_residency" "$mib" "$runs"
