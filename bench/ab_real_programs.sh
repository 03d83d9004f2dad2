#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A/B of allocator builds or settings on bench/real_programs.sh's programs
# (bench/programs/real_programs.list), interleaved: each run goes once
# through every program, and for each program once through every
# configuration, the order rotated by one each run (the configuration that
# follows another gets the memory it just freed).  Prints one line per
# run (program, configuration, wall s, user s, sys s, peak RSS KiB, minor
# faults) and a table of medians: wall time and its ratio to the best
# configuration named as a peer, peak RSS and system time.  It reports;
# it never fails on a timing.  Outputs are not checked here
# (bench/real_programs.sh does).
#
# usage: bench/ab_real_programs.sh [--runs N] [--programs LIST]
#                                  [--inputs DIR] CONFIG...
#   CONFIG    NAME=LIB[,VAR=VALUE...]: LIB preloaded (LD_PRELOAD), with the
#             variables set; LIB "none" is the C library's malloc.  A NAME
#             starting with "peer:" is a peer: ratios are to the best peer.
#   --runs N  runs of each program under each configuration (default 5)
#   --inputs  inputs directory (default: generated, scale 1 seed 1)
# example (the default period against huge pages from 32 MiB, with two
# peers):
#   bench/ab_real_programs.sh peer:mimalloc=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 \
#     peer:glibc=none hs=build/allocator/libheapscope.so \
#     hs-thp=build/allocator/libheapscope.so,HEAPSCOPE_HUGEPAGE_AFTER=32M
set -euo pipefail
ROOT=$(cd "$(dirname "$(realpath "$0")")/.." && pwd)
P=$ROOT/bench/programs
RUNS=5 ONLY= IN=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--programs) ONLY=$2; shift 2 ;;
	--inputs) IN=$2; shift 2 ;;
	-h | --help) sed -n '3,25p' "$0"; exit 0 ;;
	-*) echo "$0: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
. "$ROOT/bench/lib.sh"
bench_ab_configs "$0" "$@"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -z "$IN" ]; then
	IN=$TMP/in
	python3 "$P/realprog_inputs.py" "$IN" 1 1
fi
. "$P/real_programs.list"
n=${#NAMES[@]}
for r in $(seq "$RUNS"); do
	for spec in "${PROGRAMS[@]}"; do
		prog=${spec%%|*} line=${spec#*|}
		line=${line#*|}
		[ -n "$ONLY" ] && [[ ",$ONLY," != *",$prog,"* ]] && continue
		line=${line//I\//$IN/}
		line=${line//W\//$TMP/w/}
		eval "CMD=($line)"
		for k in $(seq 0 $((n - 1))); do
			i=$(((k + r) % n))
			rm -rf "$TMP/w"
			mkdir -p "$TMP/w"
			pre=${LIBS[$i]}
			[ "$pre" = none ] && pre=
			# shellcheck disable=SC2086 # the variables, split on purpose
			env ${ENVS[$i]} LD_PRELOAD="$pre" LC_ALL=C TZ=UTC TMPDIR="$TMP/w" \
				/usr/bin/time -o "$TMP/t" -f "%e %U %S %M %R" "${CMD[@]}" \
				>/dev/null 2>&1 || echo "$0: $prog under ${NAMES[$i]} failed" >&2
			echo "$prog ${NAMES[$i]} $(tail -1 "$TMP/t")"
		done
	done
done | tee "$TMP/runs"
python3 - "$TMP/runs" <<'EOF'
import collections, math, statistics, sys
d = collections.defaultdict(list)
progs, cfgs = [], []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 7:
        continue
    if f[0] not in progs: progs.append(f[0])
    if f[1] not in cfgs: cfgs.append(f[1])
    d[(f[0], f[1])].append([float(x) for x in f[2:]])
peers = [c for c in cfgs if c.startswith('peer:')] or cfgs
med = lambda p, c, i: statistics.median(x[i] for x in d[(p, c)])
print('\nmedians: wall s (ratio to the best peer) / peak RSS MiB / sys s')
print('| program | ' + ' | '.join(cfgs) + ' |')
print('|---|' + '---:|' * len(cfgs))
ratios = collections.defaultdict(list)
for p in progs:
    best = min(med(p, c, 0) for c in peers)
    cells = []
    for c in cfgs:
        w = med(p, c, 0)
        ratios[c].append(w / best)
        cells.append('%.3f (%.2f) / %.1f / %.2f' % (w, w / best, med(p, c, 3) / 1024, med(p, c, 2)))
    print('| %s | %s |' % (p, ' | '.join(cells)))
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print('| *geo mean* | ' + ' | '.join('%.3f' % geo(ratios[c]) for c in cfgs) + ' |')
EOF
