#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_rss_untouched.sh HEAPSCOPE TARGET - `heapscope rss` on a process
# that holds 256 MiB of large blocks of which it touched only a quarter of
# each, and 9.6 MB of small objects (tests/programs/rss_untouched.c):
#  - the parts sum to the kernel's RSS (smaps_rollup Rss, read here too)
#    within 5 %, with nothing over RSS;
#  - the resident bytes of the large blocks the collector measured
#    (heap map + pagemap) are what the target measured itself with
#    mincore(2), within 1 % + 256 KiB (other large blocks of the process,
#    reads a moment apart);
#  - heap_in_use (the part) is those resident bytes plus the small heap,
#    and heap_in_use_bytes (the exact count) holds all 256 MiB;
# three ways: the default period (the 8 MiB blocks mostly sampled, in the
# region), sampling off (unsampled region blocks), and region blocks off
# (HEAPSCOPE_REGION_BLOCK_MAX=0: every large block a page-heap span).
# Root: it reads /proc/PID/mem and pagemap.
# Rerun: cd build && ctest -R collector_rss_untouched -V
set -u
HS=$1 TARGET=$2
work=$(mktemp -d)
tpid=
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || {
	[ "${CI:-}" = true ] && fail "needs root under CI"
	echo "SKIP: needs root"; exit 77
}

# run NAME ENV...: the target under ENV, then its RSS table checked
run() {
	local name=$1
	shift
	rm -f "$work/in" "$work/out"
	mkfifo "$work/in"
	env "$@" LD_PRELOAD="${HS_UNFOLLOWED_LIB:?run me through run_unfollowed.sh}" \
		"$TARGET" <"$work/in" >"$work/out" &
	tpid=$!
	exec 3>"$work/in"
	for _ in $(seq 300); do
		grep -q '^ready' "$work/out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^ready' "$work/out" || fail "$name: target never ready"
	"$HS" rss -p "$tpid" >"$work/$name.json" || fail "$name: rss failed"
	grep '^Rss:' "/proc/$tpid/smaps_rollup" >"$work/$name.rollup"
	exec 3>&-
	wait "$tpid"
	tpid=
	python3 - "$name" "$work/$name.json" "$work/$name.rollup" \
		$(grep '^ready' "$work/out" | cut -d' ' -f2-) <<'PY' || exit 1
import json, re, sys
name, t = sys.argv[1], json.load(open(sys.argv[2]))
kernel = int(re.match(r"Rss:\s+(\d+) kB", open(sys.argv[3]).read()).group(1)) << 10
truth, large, small = map(int, sys.argv[4:7])
p, d = t["parts"], t["detail"]
s = sum(p.values())
print(f"{name}: parts {s} vs smaps_rollup Rss {kernel} "
      f"({100 * (s - kernel) / kernel:+.2f} %), rss_bytes {t['rss_bytes']}")
print(f"{name}: large blocks {large} B allocated, resident {truth} (target's "
      f"mincore) vs {d['large_resident_bytes']} (collector; spans "
      f"{d['large_span_resident_bytes']})")
print(f"{name}: heap_in_use part {p['heap_in_use']}, exact "
      f"{t['heap_in_use_bytes']}, parts: {p}")
assert t["large_measured"], "large blocks not measured"
assert abs(s - kernel) <= 0.05 * kernel, "parts do not sum to RSS within 5 %"
assert t["parts_over_rss_bytes"] <= 0.05 * kernel
# the target touched a quarter of 256 MiB: 64 MiB (THP may round up)
assert truth >= 64 << 20 and truth <= 0.5 * large, truth
got = d["large_resident_bytes"]
assert abs(got - truth) <= 0.01 * truth + (256 << 10), \
    "the collector's resident large bytes are not the target's"
assert t["heap_in_use_bytes"] >= large + small
assert d["large_bytes"] >= large
want = truth + small
assert abs(p["heap_in_use"] - want) <= 0.05 * want, \
    f"heap_in_use {p['heap_in_use']} is not resident large + small {want}"
PY
}

run sampled HEAPSCOPE_SAMPLE_SEED=1
run unsampled HEAPSCOPE_SAMPLE_RATE=0
run spans HEAPSCOPE_SAMPLE_RATE=0 HEAPSCOPE_REGION_BLOCK_MAX=0
python3 - "$work/spans.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))["detail"]
assert d["large_span_resident_bytes"] >= 64 << 20, \
    "the page heap's spans were not measured"
PY
echo PASS
