#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_daemon_compat.sh HEAPSCOPE LIBCOMPAT_FIRE TARGET - `heapscope
# daemon` on compatible probes (include/heapscope/abi.h: otel_memory
# alloc(ptr, size, weight), free(ptr)), root + BPF + HTTP.
#
# libcompat_fire.so fires otel_memory:alloc/free (no heapscope probes), so
# `daemon --lib libcompat_fire.so` (provider auto) attaches those, by path,
# for every process.  daemon_compat_target links it: one runs before the
# daemon (found by the /proc scan, it waits for the probes to be armed),
# one starts after it (found by its first event).  For each, over HTTP:
#   - /debug/pprof/heap?pid=N&format=folded totals exactly the live
#     weights fired (compat_hold_a + compat_hold_b; churn cancels), on
#     stacks main;compat_hold_a / main;compat_hold_b;
#   - /processes lists it with provider otel_memory;
#   - the pprof comments say there is no registry and count the 20 frees
#     of blocks whose allocation was never fired;
#   - /debug/pprof/allocs over a window in which the target churns 300
#     blocks reports exactly their weights (frees do not apply there);
#   - after the target is killed, its pid gives 404.
# Exit 77 = skip (not root / no BPF / no curl), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
[ -d /sys/bus/event_source/devices/uprobe ] || skip "kernel has no uprobes"
command -v curl >/dev/null || skip "curl missing (scripts/bootstrap.sh)"

work=$(mktemp -d /tmp/hs-dcompat.XXXXXX)
dpid="" t1="" t2=""
cleanup() {
	for p in $t1 $t2; do kill -9 "$p" 2>/dev/null; done
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- daemon log"; tail -30 "$work/daemon.err" 2>/dev/null
	exit 1
}

wait_line() { # file pattern pid: the line, or fail after 30 s
	for _ in $(seq 1 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
sum_for() { # folded func: sum of the stacks through func
	awk -v f="$2" '{ v = $NF; $NF = ""; n = split($0, fr, ";"); hit = 0;
		for (i = 1; i <= n; i++) { g = fr[i]; sub(/ +$/, "", g);
			if (g == f) hit = 1 }
		if (hit) s += v } END { printf "%.0f\n", s + 0 }' "$1"
}
total() { awk '{ s += $NF } END { printf "%.0f\n", s + 0 }' "$1"; }

# 1. a target before the daemon: nothing fires until the probes are armed
"$TARGET" >"$work/t1.out" 2>"$work/t1.err" &
t1=$!

# 2. the daemon, on a port below the ephemeral range
for _ in 1 2 3 4 5; do
	port=$((10000 + RANDOM % 20000))
	ss -ltn 2>/dev/null | grep -q ":$port " || break
done
base=http://127.0.0.1:$port
"$HEAPSCOPE" daemon --lib "$LIB" --listen "127.0.0.1:$port" \
	>"$work/daemon.out" 2>"$work/daemon.err" &
dpid=$!
up=0
for _ in $(seq 1 150); do
	curl -s -o /dev/null "$base/metrics" && { up=1; break; }
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if [ $up -eq 0 ]; then
	grep -qi "cannot load the BPF\|BPF not available" "$work/daemon.err" &&
		skip "$(head -1 "$work/daemon.err")"
	fail "daemon did not start"
fi
grep -q "attached to otel_memory probes in $LIB" "$work/daemon.err" ||
	fail "the daemon did not say it attached otel_memory probes"
echo "ok: $(grep 'attached to otel_memory' "$work/daemon.err")"

# 3. a target after the daemon
"$TARGET" >"$work/t2.out" 2>"$work/t2.err" &
t2=$!
wait_line "$work/t1.out" '^ready' "$t1" || fail "target 1 not ready: $(cat "$work/t1.err")"
wait_line "$work/t2.out" '^ready' "$t2" || fail "target 2 not ready: $(cat "$work/t2.err")"

check_heap() { # pid outfile-prefix
	local pid=$1 f=$work/heap-$1.folded want_a want_b early got got_a got_b
	read -r _ _ want_a want_b early <"$work/$2.out"
	# The events are in the ring buffer; give the daemon a moment.
	for _ in $(seq 1 50); do
		curl -sf -o "$f" "$base/debug/pprof/heap?pid=$pid&format=folded" &&
			[ "$(total "$f")" = $((want_a + want_b)) ] && break
		sleep 0.1
	done
	got=$(total "$f") got_a=$(sum_for "$f" compat_hold_a)
	got_b=$(sum_for "$f" compat_hold_b)
	echo "--- pid $pid ($2) folded profile"; cat "$f"
	echo "pid $pid ($2): compat_hold_a $got_a (fired $want_a), compat_hold_b $got_b (fired $want_b), total $got"
	[ "$got_a" = "$want_a" ] || { cat "$f"; fail "pid $pid: compat_hold_a $got_a, want $want_a"; }
	[ "$got_b" = "$want_b" ] || { cat "$f"; fail "pid $pid: compat_hold_b $got_b, want $want_b"; }
	[ "$got" = $((want_a + want_b)) ] ||
		{ cat "$f"; fail "pid $pid: total $got, want $((want_a + want_b)) (churn must cancel)"; }
	grep -q ';main;compat_hold_a;' "$f" ||
		{ cat "$f"; fail "pid $pid: no stack through main;compat_hold_a"; }
	grep -q ';main;compat_hold_b;' "$f" ||
		{ cat "$f"; fail "pid $pid: no stack through main;compat_hold_b"; }
	# pprof: comments name the provider, the missing registry, and the
	# frees of blocks never seen allocated.
	curl -sf -o "$work/heap-$pid.pb.gz" "$base/debug/pprof/heap?pid=$pid" ||
		fail "pid $pid: pprof scrape"
	gzip -dc "$work/heap-$pid.pb.gz" | tr -c '[:print:]' '\n' >"$work/heap-$pid.strings"
	grep -q "otel_memory probes, no registry: only allocations sampled after the attach are here; $early frees of earlier ones ignored" \
		"$work/heap-$pid.strings" ||
		{ grep heapscope: "$work/heap-$pid.strings"; fail "pid $pid: pprof comments"; }
	echo "ok: pid $pid: comment: $(grep -o 'otel_memory probes, no registry.*ignored' "$work/heap-$pid.strings")"
}
check_heap "$t1" t1
check_heap "$t2" t2

# 4. /processes lists both, with the provider
curl -sf -o "$work/processes.json" "$base/processes" || fail "/processes"
for p in $t1 $t2; do
	grep -q "\"pid\": $p, .*\"provider\": \"otel_memory\"" "$work/processes.json" ||
		{ cat "$work/processes.json"; fail "/processes does not list pid $p with provider otel_memory"; }
done
echo "ok: /processes lists $t1 and $t2 (provider otel_memory)"

# 5. an allocs window: 300 churned blocks at weight 7777777 each
curl -sf -o "$work/allocs.folded" \
	"$base/debug/pprof/allocs?pid=$t2&seconds=2&format=folded" &
cpid=$!
sleep 0.5
kill -USR1 "$t2"
wait "$cpid" || fail "allocs scrape"
wait_line "$work/t2.out" '^churned 1' "$t2" || fail "target 2 did not churn"
got=$(total "$work/allocs.folded")
[ "$got" = $((300 * 7777777)) ] ||
	{ cat "$work/allocs.folded"; fail "allocs window: $got, want $((300 * 7777777))"; }
[ "$(sum_for "$work/allocs.folded" compat_churn)" = "$got" ] ||
	fail "allocs window: not all through compat_churn"
echo "ok: allocs window: $got = 300 x 7777777 through compat_churn"

# 6. target 2 gone: 404, the daemon lives
kill -9 "$t2"; wait "$t2" 2>/dev/null; t2_old=$t2; t2=""
for _ in $(seq 1 30); do
	c=$(curl -s -o /dev/null -w '%{http_code}' "$base/debug/pprof/heap?pid=$t2_old")
	[ "$c" = 404 ] && break
	sleep 0.1
done
[ "$c" = 404 ] || fail "killed target: HTTP $c, want 404"
echo "ok: killed target -> 404"

kill -TERM "$dpid"; wait "$dpid"; rc=$?; dpid=""
[ $rc -eq 0 ] || fail "daemon exited $rc on SIGTERM"
echo "PASS"
