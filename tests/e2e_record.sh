#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end test (root, BPF): e2e_target preloaded with libheapscope.so at a
# 64 KiB sampling period and a fixed seed; `heapscope record -p PID` writes
# the folded heap profile; each known call site must get its known amount
# within 5 sigma of the estimator (DESIGN.md section 1: the variance of the
# estimate M = sum W lies between T^2 - T and T*M; we use the upper bound).
# LIB = "static": TARGET links libheapscope.a; nothing is preloaded and the
# collector gets the binary itself with --lib.
# Exit 77 = skip (not root / no BPF), turned into a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3
T=65536

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
grep -q uprobe /proc/filesystems /sys/bus/event_source/devices/*/type 2>/dev/null ||
	[ -d /sys/bus/event_source/devices/uprobe ] || skip "kernel has no uprobes"

work=$(mktemp -d)
tpid="" rpid=""
cleanup() {
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

if [ "$LIB" = static ]; then
	preload=() libopt=(--lib "$TARGET") mapped=$TARGET
else
	preload=(LD_PRELOAD="$LIB") libopt=() mapped=$LIB
fi
env HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=42 "${preload[@]}" \
	"$TARGET" >"$work/target.out" 2>"$work/target.err" &
tpid=$!
# record needs the object mapped: wait for the exec (and the loader)
for _ in $(seq 1 200); do
	grep -qF "$(readlink -f "$mapped")" "/proc/$tpid/maps" 2>/dev/null && break
	sleep 0.05
done
# The target waits until the collector has armed the probes.
"$HEAPSCOPE" record -p "$tpid" "${libopt[@]}" -o "$work/heap.folded" \
	2>"$work/record.err" &
rpid=$!

for _ in $(seq 1 600); do
	grep -q '^ready' "$work/target.out" 2>/dev/null && break
	kill -0 "$rpid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^ready' "$work/target.out"; then
	echo "FAIL: target did not become ready"; cat "$work/record.err" "$work/target.err"; exit 1
fi
sleep 0.5 # let the last ring-buffer events drain
kill -INT "$rpid"
wait "$rpid"; rc=$?
rpid=""
if [ $rc -ne 0 ]; then
	echo "FAIL: heapscope record exited $rc"; cat "$work/record.err"; exit 1
fi
cat "$work/record.err"
echo "--- folded profile (top 10 lines)"
sort -t' ' -k2 -nr "$work/heap.folded" | head -10

# Sum the folded values of stacks whose frame list contains FUNC below main.
sum_for() {
	awk -v f="$1" '{ v = $NF; $NF = ""; n = split($0, fr, ";");
		sub(/ +$/, "", fr[n]); hit = 0; seen_main = 0;
		for (i = 1; i <= n; i++) { g = fr[i]; sub(/ +$/, "", g);
			if (g == "main") seen_main = 1;
			if (seen_main && g == f) hit = 1 }
		if (hit) s += v } END { printf "%.0f\n", s + 0 }' "$work/heap.folded"
}
check() { # func true_bytes request_size
	local got truth=$2 r=$3
	got=$(sum_for "$1")
	# sigma <= sqrt(T*M) with M in (r+1)-byte units, scaled back to bytes.
	awk -v got="$got" -v truth="$truth" -v T=$T -v r="$r" -v f="$1" 'BEGIN {
		M = truth / r * (r + 1); sigma = sqrt(T * M); tol = 5 * sigma;
		d = got - truth; if (d < 0) d = -d;
		printf "%s: estimated %.0f bytes, true %.0f, |diff| %.0f, 5 sigma %.0f\n",
			f, got, truth, d, tol;
		exit (d <= tol) ? 0 : 1 }'
}
fail=0
check hold_small_blocks $((64 * 1024 * 1024)) 4096 || fail=1
check hold_large_blocks $((16 * 1024 * 1024)) 1048576 || fail=1
if [ $fail -ne 0 ]; then echo "FAIL: estimate outside bounds"; exit 1; fi
echo "PASS"
