#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compatible probes (include/heapscope/abi.h: otel_memory / ddheap
# alloc(ptr, size, weight), free(ptr)), root + BPF.
#
#   test_compat.sh sdt HEAPSCOPE COMPAT_TARGET PROVIDER
#     compat_target fires the probes itself around glibc malloc with known
#     weights; `heapscope record --provider PROVIDER` (auto: detected from
#     the notes) must report exactly the weights it fired for live blocks
#     (frees subtracted), on stacks through the known functions, and the
#     pprof comments must say there is no registry.
#   test_compat.sh lib HEAPSCOPE LIBHEAPSCOPE COMPAT_LIB_TARGET
#     libheapscope's own otel_memory probes against its sample_alloc: two
#     collectors on one process at a fixed seed, one per provider, must
#     count the same allocations and frees and agree on the requested
#     bytes within the compatible weight's rounding (0.5 byte per sample).
#
# Exit 77 = skip (not root / no BPF), turned into a failure when CI=true.
set -u
MODE=$1 HEAPSCOPE=$2

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
[ -d /sys/bus/event_source/devices/uprobe ] || skip "kernel has no uprobes"

work=$(mktemp -d /tmp/hs-compat.XXXXXX)
tpid="" r1="" r2=""
cleanup() {
	for p in $r1 $r2 $tpid; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

wait_ready() { # file recorder-pids...
	local f=$1; shift
	for _ in $(seq 1 600); do
		grep -q '^ready' "$f" 2>/dev/null && return 0
		for p in "$@"; do kill -0 "$p" 2>/dev/null || return 1; done
		sleep 0.1
	done
	return 1
}
stop() { # pid name: SIGINT, exit 0 expected
	kill -INT "$1"; wait "$1"; local rc=$?
	[ $rc -eq 0 ] || { cat "$work"/*.err; fail "$2 exited $rc"; }
}
sum_for() { # folded func: sum of the stacks through func
	awk -v f="$2" '{ v = $NF; $NF = ""; n = split($0, fr, ";"); hit = 0;
		for (i = 1; i <= n; i++) { g = fr[i]; sub(/ +$/, "", g);
			if (g == f) hit = 1 }
		if (hit) s += v } END { printf "%.0f\n", s + 0 }' "$1"
}
total() { awk '{ s += $NF } END { printf "%.0f\n", s + 0 }' "$1"; }
# The recorder reads /proc/PID/maps once: start it only after the child
# has exec'd the target and mapped what it looks for (else a loaded host
# sees bash's maps, and record rightly says the process has no probes).
wait_mapped() { # pid pattern
	for _ in $(seq 1 600); do
		grep -q -- "$2" "/proc/$1/maps" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

case $MODE in
sdt)
	TARGET=$3 PROVIDER=$4
	"$TARGET" >"$work/target.out" 2>"$work/target.err" &
	tpid=$!
	wait_mapped "$tpid" "$(basename "$TARGET")" ||
		{ cat "$work"/*.err; fail "target did not start"; }
	"$HEAPSCOPE" record -p "$tpid" --provider "$PROVIDER" \
		-o "$work/heap.folded" 2>"$work/r1.err" &
	r1=$!
	wait_ready "$work/target.out" "$r1" ||
		{ cat "$work"/*.err; fail "target did not become ready"; }
	sleep 0.5 # let the last ring-buffer events drain
	stop "$r1" "heapscope record"; r1=""
	cat "$work/r1.err"
	echo "--- folded profile"; cat "$work/heap.folded"
	read -r _ _ want_a want_b early <"$work/target.out"
	got_a=$(sum_for "$work/heap.folded" compat_hold_a)
	got_b=$(sum_for "$work/heap.folded" compat_hold_b)
	got=$(total "$work/heap.folded")
	echo "compat_hold_a: $got_a (fired $want_a); compat_hold_b: $got_b (fired $want_b); total $got"
	[ "$got_a" = "$want_a" ] || fail "compat_hold_a: $got_a, want $want_a"
	[ "$got_b" = "$want_b" ] || fail "compat_hold_b: $got_b, want $want_b"
	[ "$got" = $((want_a + want_b)) ] || fail "total $got, want $((want_a + want_b)) (churn must cancel)"
	grep -q ';main;compat_hold_a' "$work/heap.folded" ||
		fail "stack does not reach main through compat_hold_a"
	# A second, short recording as pprof: its comments name the provider
	# and the missing registry; the early frees were of unseen blocks.
	"$HEAPSCOPE" record -p "$tpid" --provider "$PROVIDER" -d 1 \
		--format pprof -o "$work/heap.pb.gz" 2>"$work/r2.err" ||
		{ cat "$work/r2.err"; fail "pprof recording"; }
	name=$PROVIDER; [ "$name" = auto ] && name=otel_memory
	gzip -dc "$work/heap.pb.gz" | tr -c '[:print:]' '\n' |
		grep -q "$name probes, no registry: only allocations sampled after the attach" ||
		fail "pprof comments do not state the missing registry"
	grep -q "$early frees of earlier ones ignored" <(gzip -dc "$work/heap.pb.gz" | tr -c '[:print:]' '\n') &&
		fail "the second recording saw frees it should not have"
	echo "PASS"
	;;
lib)
	LIB=$3 TARGET=$4
	HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=42 LD_PRELOAD=$LIB \
		"$TARGET" >"$work/target.out" 2>"$work/target.err" &
	tpid=$!
	wait_mapped "$tpid" libheapscope ||
		{ cat "$work"/*.err; fail "target did not map libheapscope"; }
	# The target starts once both providers' alloc probes are armed.  A
	# heapscope daemon on the host may have armed sample_alloc already,
	# so the heapscope recorder must be attached (-v: "attached to")
	# before the otel_memory one is started.
	"$HEAPSCOPE" record -v -p "$tpid" --provider heapscope --profile allocs \
		--value requested -o "$work/own.folded" 2>"$work/r1.err" &
	r1=$!
	for _ in $(seq 1 600); do
		grep -q '^heapscope: attached to' "$work/r1.err" && break
		kill -0 "$r1" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^heapscope: attached to' "$work/r1.err" ||
		{ cat "$work"/*.err; fail "heapscope record did not attach"; }
	"$HEAPSCOPE" record -p "$tpid" --provider otel_memory --lib libheapscope \
		--profile allocs -o "$work/otel.folded" 2>"$work/r2.err" &
	r2=$!
	wait_ready "$work/target.out" "$r1" "$r2" ||
		{ cat "$work"/*.err; fail "target did not become ready"; }
	sleep 0.5
	stop "$r1" "heapscope record (heapscope)"; r1=""
	stop "$r2" "heapscope record (otel_memory)"; r2=""
	cat "$work/r1.err" "$work/r2.err"
	ev1=$(grep -o 'events: [0-9]* allocs, [0-9]* frees' "$work/r1.err")
	ev2=$(grep -o 'events: [0-9]* allocs, [0-9]* frees' "$work/r2.err")
	[ -n "$ev1" ] && [ "$ev1" = "$ev2" ] ||
		fail "the providers saw different events: '$ev1' vs '$ev2'"
	n=$(echo "$ev1" | awk '{ print $2 }')
	own=$(total "$work/own.folded") otel=$(total "$work/otel.folded")
	awk -v a="$own" -v b="$otel" -v n="$n" 'BEGIN {
		d = a - b; if (d < 0) d = -d; tol = n / 2 + 1;
		printf "requested bytes: heapscope %.0f, otel_memory %.0f, |diff| %.0f (rounding bound %.0f, %d samples)\n", a, b, d, tol, n;
		exit (d <= tol && n > 1000) ? 0 : 1 }' ||
		fail "totals differ beyond rounding (or too few samples)"
	echo "PASS"
	;;
*)
	echo "usage: $0 sdt|lib ..." >&2
	exit 2
	;;
esac
