#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_rss.sh HEAPSCOPE RSS_TARGET FAKE_TARGET HOLD - `heapscope rss -p PID`
# (root: it reads /proc/PID/mem) on a process holding a known heap
# (tests/programs/rss_target.c):
#  - the parts sum to the kernel's RSS (smaps_rollup) within 5 %;
#  - heap_in_use grows by exactly the bytes the target allocated, rounded
#    to its size classes by the target's own copy of the size-class rule;
#    while four other threads hold freed objects in their caches (the
#    collector sums the caches of all five threads);
#  - the library's heapscope_get_allocator_stats in_use_bytes (caches
#    and span tails included) is heap_in_use + span_waste_bytes +
#    thread_cache_bytes, and the caches hold at least the workers'
#    4 x 40 freed 112-byte objects;
#  - the sampled estimate is within 4 sigma of heap_in_use, sigma^2 <=
#    sum(a) * T for period T (a fixed seed);
#  - --prometheus gives the same parts;
#  - on a busy target (HOLD: 100 MiB held, 64 KiB blocks allocated and
#    freed 4 per millisecond) the parts still sum to RSS within 5 % and
#    heap_in_use holds the 100 MiB;
# and the one-line errors: a bad pid, a vanished pid, a process without
# the library, a library without the statistics block (the fake one), a
# spoiled block, a thread-cache list that loops (made in the live target).
set -u
HS=$1 TARGET=$2 FAKE=$3 HOLD=$4
T=65536
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || {
	[ "${CI:-}" = true ] && fail "needs root under CI"
	echo "SKIP: needs root"; exit 77
}

# start TARGET [ARG]: the target with a fifo on stdin, its output in
# $work/out; waits for ready1, sets tpid
start() {
	rm -f "$work/in" "$work/out"
	mkfifo "$work/in"
	HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=1 \
		"$TARGET" "$@" <"$work/in" >"$work/out" &
	tpid=$!
	pids+=("$tpid")
	exec 3>"$work/in"
	for _ in $(seq 100); do
		grep -q '^ready1' "$work/out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "target never ready"
}
next_phase() {
	echo >&3
	for _ in $(seq 300); do
		grep -q '^ready2' "$work/out" && return 0
		sleep 0.1
	done
	fail "target never reached phase 2"
}

start
"$HS" rss -p "$tpid" >"$work/base.json" || fail "rss (phase 1) failed"
next_phase
read -r _ expected api main_tc <<<"$(grep '^ready2' "$work/out")"
"$HS" rss -p "$tpid" >"$work/full.json" || fail "rss (phase 2) failed"
"$HS" rss -p "$tpid" --prometheus >"$work/full.prom" || fail "rss --prometheus failed"
python3 - "$work/base.json" "$work/full.json" "$work/full.prom" "$expected" "$api" "$T" "$main_tc" <<'PY' || exit 1
import json, math, re, sys
base = json.load(open(sys.argv[1]))
full = json.load(open(sys.argv[2]))
prom = open(sys.argv[3]).read()
expected, api, T = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
main_tc = int(sys.argv[7])
p = full["parts"]
names = ["heap_in_use", "heap_free_committed", "thread_caches",
         "allocator_metadata", "sampling_cost", "other_anonymous",
         "file_backed"]
assert sorted(p) == sorted(names), p
rss = full["rss_bytes"]
s = sum(p.values())
print(f"rss {rss} parts {s} ({100 * (s - rss) / rss:+.2f} %): {p}")
assert s == full["parts_sum_bytes"]
assert abs(s - rss) <= 0.05 * rss, "parts do not sum to RSS within 5 %"
# heap_in_use_bytes: the exact count (the part counts resident pages)
grown = full["heap_in_use_bytes"] - base["heap_in_use_bytes"]
print(f"heap_in_use grew {grown}, the target allocated {expected}")
assert grown == expected, "heap_in_use is not the bytes allocated"
d = full["detail"]
waste, tc = d["span_waste_bytes"], d["thread_cache_bytes"]
print(f"api in use {api} = heap_in_use {full['heap_in_use_bytes']} + tails {waste} + caches {tc}?")
assert api == full["heap_in_use_bytes"] + waste + tc
# every block touched: the resident part is the exact count but for the
# page rounding of the large blocks' tails
assert full["large_measured"]
assert 0 <= full["heap_in_use_bytes"] - p["heap_in_use"] <= 0.01 * rss
print(f"caches: {tc} bytes in {d['thread_caches']}, this thread's {main_tc}")
assert tc - main_tc >= 4 * 40 * 112, "the workers' caches are not counted"
assert d["thread_caches"] == 5
assert full["consistent"] and full["sampled_pages_measured"]
# every block is touched: the allocator's figures are (almost) all resident
print(f"unresident {full['unresident_bytes']}, other anonymous {p['other_anonymous']}")
assert full["unresident_bytes"] <= 0.02 * rss
assert p["other_anonymous"] >= full["anonymous_outside_allocator_bytes"]
assert p["sampling_cost"] > 0 and full["detail"]["live_samples"] > 0
# the target holds ~53 MB of heap in 33030 blocks: RSS is mostly heap
assert p["heap_in_use"] >= 0.85 * rss, "the heap is not most of RSS"
est = full["heap_in_use_estimate_bytes"]
exact = full["heap_in_use_bytes"]
sigma = math.sqrt(exact * T)
print(f"estimate {est} vs {exact}: {(est - exact) / sigma:+.2f} sigma")
assert abs(est - exact) <= 4 * sigma
got = {m.group(1): int(m.group(2)) for m in re.finditer(
    r'^heapscope_process_rss_part_bytes\{pid="\d+",part="(\w+)"\} (\d+)$', prom, re.M)}
assert got == p, (got, p)
assert re.search(rf'^heapscope_process_rss_bytes\{{pid="\d+"\}} {rss}$', prom, re.M)
assert re.search(rf'^heapscope_process_heap_in_use_estimate_bytes\{{pid="\d+"\}} {est}$', prom, re.M)
assert re.search(rf'^heapscope_process_heap_in_use_bytes\{{pid="\d+"\}} {exact}$', prom, re.M)
PY
exec 3>&-

# ---- a busy target (the library through run_unfollowed.sh's copy)
LD_PRELOAD=${HS_UNFOLLOWED_LIB:?run me through run_unfollowed.sh} \
	"$HOLD" churn 4 >"$work/hold.out" &
hpid=$!
pids+=("$hpid")
for _ in $(seq 300); do grep -q '^ready' "$work/hold.out" && break; sleep 0.1; done
grep -q '^ready' "$work/hold.out" || fail "$HOLD never ready"
for i in 1 2 3; do
	"$HS" rss -p "$hpid" >"$work/busy$i.json" || fail "rss of a busy target failed"
done
python3 - "$work"/busy*.json <<'PY' || exit 1
import json, sys
for name in sys.argv[1:]:
    t = json.load(open(name))
    p, rss = t["parts"], t["rss_bytes"]
    s = sum(p.values())
    print(f"busy: rss {rss} parts {s} ({100 * (s - rss) / rss:+.2f} %), "
          f"heap_in_use {p['heap_in_use']}, consistent {t['consistent']}")
    assert abs(s - rss) <= 0.05 * rss
    assert 100 << 20 <= t["heap_in_use_bytes"] <= (100 << 20) + (8 << 20)
PY
kill "$hpid"

# ---- one-line errors
# expect STATUS PATTERN ARGS...: exit status and a one-line stderr
expect() {
	local want=$1 pat=$2
	shift 2
	"$HS" rss "$@" >"$work/o" 2>"$work/e"
	local st=$?
	[ "$st" = "$want" ] || fail "rss $*: exit $st, not $want ($(cat "$work/e"))"
	[ ! -s "$work/o" ] || fail "rss $*: wrote to stdout on error"
	[ "$(wc -l <"$work/e")" -le 2 ] || fail "rss $*: more than one error line"
	grep -q "$pat" "$work/e" || fail "rss $*: '$(cat "$work/e")' lacks '$pat'"
	echo "rss $*: $(head -1 "$work/e")"
}
expect 2 "invalid" -p 0
expect 2 "invalid" -p abc
expect 2 "required"
true &
gone=$!
wait "$gone"
expect 1 "no process $gone" -p "$gone"
sleep 30 &
plain=$!
pids+=("$plain")
expect 1 "maps no libheapscope" -p "$plain"
"$FAKE" 20000 >"$work/fake.out" &
fpid=$!
pids+=("$fpid")
for _ in $(seq 100); do grep -q '^ready' "$work/fake.out" && break; sleep 0.1; done
expect 1 "no statistics block" -p "$fpid"
start corrupt
expect 1 "is not valid" -p "$tpid"
exec 3>&-
start loop
next_phase
expect 1 "is not valid" -p "$tpid"
exec 3>&-
echo "PASS"
