#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of allocator builds or settings on mimalloc-bench's programs, with
# bench.sh's command lines and metric (bench/lib.sh bench_mb_programs,
# bench_mb_metric), interleaved: each run goes once through every program,
# and for each program once through every configuration, the order rotated
# by one each run.  For the 2-thread programs, whose figures move with how
# the VM places its cores (bench/README.md, "Noise"): many runs of two
# builds side by side say more than one run of the whole suite.  Prints
# one line per run (program, configuration, metric s, wall s, peak RSS KiB)
# and a table of medians with ratios to the first configuration.  It
# reports; it never fails on a timing.  The programs must have been
# compiled (bench/mimalloc_bench.sh does, into bench/build/mimalloc-bench).
#
# usage: bench/ab_mimalloc_bench.sh [--runs N] [--programs LIST]
#                                   [--threads N] [--suite DIR] CONFIG...
#   CONFIG      NAME=LIB[,VAR=VALUE...]: LIB preloaded (LD_PRELOAD), with
#               the variables set; LIB "none" is the C library's malloc
#   --runs N    runs of each program under each configuration (default 9)
#   --programs  comma-separated (default: the multi-threaded ones,
#               larsonN-sized,rptestN,xmalloc-testN,glibc-thread,mstressN,
#               alloc-testN)
#   --threads N bench.sh's procs (default nproc)
# example (a build of main against a branch's):
#   bench/ab_mimalloc_bench.sh --runs 21 --programs larsonN-sized \
#     main=/tmp/bmain/allocator/libheapscope.so branch=build/allocator/libheapscope.so
set -euo pipefail
ROOT=$(cd "$(dirname "$(realpath "$0")")/.." && pwd)
BENCH=$ROOT/bench
RUNS=9 ONLY=larsonN-sized,rptestN,xmalloc-testN,glibc-thread,mstressN,alloc-testN
PROCS=$(nproc) SUITE=${MIMALLOC_BENCH_DIR:-$ROOT/../shared/peer-suites/mimalloc-bench}
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--programs) ONLY=$2; shift 2 ;;
	--threads) PROCS=$2; shift 2 ;;
	--suite) SUITE=$2; shift 2 ;;
	-h | --help) sed -n '3,26p' "$0"; exit 0 ;;
	-*) echo "$0: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
. "$BENCH/lib.sh"
bench_ab_configs "$0" "$@"
BIN=$BENCH/build/mimalloc-bench
bench_mb_programs "$SUITE" "$PROCS" 2
SEL=()
for spec in "${MB_PROGRAMS[@]}"; do
	IFS='|' read -r name bin _ <<<"$spec"
	[[ ",$ONLY," == *",$name,"* ]] || continue
	[ -x "$BIN/$bin" ] || { echo "$0: $BIN/$bin is not built (run bench/mimalloc_bench.sh --quick --programs $name once)" >&2; exit 2; }
	SEL+=("$spec")
done
[ ${#SEL[@]} -gt 0 ] || { echo "$0: no program of '$ONLY' (names: bench/lib.sh bench_mb_programs)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=${#NAMES[@]}
for r in $(seq "$RUNS"); do
	for spec in "${SEL[@]}"; do
		IFS='|' read -r name bin args kind _ <<<"$spec"
		for k in $(seq 0 $((n - 1))); do
			i=$(((k + r) % n))
			pre=${LIBS[$i]}
			[ "$pre" = none ] && pre=
			# shellcheck disable=SC2086 # the variables and arguments, split on purpose
			(cd "$TMP" && env ${ENVS[$i]} LD_PRELOAD="$pre" \
				/usr/bin/time -o "$TMP/t" -f "%e %M" "$BIN/$bin" $args \
				>"$TMP/out" 2>&1) || echo "$0: $name under ${NAMES[$i]} failed" >&2
			read -r wall rss <"$TMP/t"
			echo "$name ${NAMES[$i]} $(bench_mb_metric "$kind" "$TMP/out" "$wall") $wall $rss"
		done
	done
done | tee "$TMP/runs"
"$PY" - "$TMP/runs" "${NAMES[@]}" <<'PYEOF'
import collections, statistics, sys
d = collections.defaultdict(list)
progs, cfgs = [], sys.argv[2:]
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 5 or f[2] == 'nan':
        continue
    if f[0] not in progs: progs.append(f[0])
    d[(f[0], f[1])].append([float(x) for x in f[2:]])
med = lambda p, c, i: statistics.median(x[i] for x in d[(p, c)])
print('\nmedians: metric s (ratio to %s) / peak RSS MiB (ratio), runs' % cfgs[0])
print('| program | ' + ' | '.join(cfgs) + ' |')
print('|---|' + '---:|' * len(cfgs))
for p in progs:
    if not all(d[(p, c)] for c in cfgs):
        continue
    t0, m0 = med(p, cfgs[0], 0), med(p, cfgs[0], 2)
    print('| %s | %s |' % (p, ' | '.join('%.4f (%.3f) / %.1f (%.3f), %d' % (
        med(p, c, 0), med(p, c, 0) / t0, med(p, c, 2) / 1024, med(p, c, 2) / m0,
        len(d[(p, c)])) for c in cfgs)))
PYEOF
