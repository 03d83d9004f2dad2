#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_semaphores.sh HEAPSCOPE TARGET - the probes' USDT semaphores follow
# the collectors: 0 before, 1 with one `heapscope record`, still 1 with two
# at once (the kernel counts installed uprobes, one per probe site, not
# consumers), still 1 when the first stops on SIGTERM while the second is
# attached, 0 when the second is killed with SIGKILL (the kernel drops its
# uprobes), and 0 again after a recording that ends by itself (-d).  The target prints its semaphores
# (tests/programs/semaphore_target.c).  Exit 77 = skip (not root / no BPF).
set -u
HEAPSCOPE=$1 TARGET=$2
skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
work=$(mktemp -d)
tpid="" c1="" c2=""
cleanup() {
	for p in $c1 $c2 $tpid; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -3 "$work/t.out"; cat "$work"/c*.err 2>/dev/null; exit 1; }

"$TARGET" >"$work/t.out" 2>&1 &
tpid=$!
want() { # A-count, within 30 s
	for _ in $(seq 1 300); do
		[ "$(grep '^sem' "$work/t.out" | tail -1 | cut -d' ' -f2)" = "$1" ] && { echo "ok: sample_alloc semaphore = $1 ($2)"; return 0; }
		sleep 0.1
	done
	fail "semaphore $(grep '^sem' "$work/t.out" | tail -1), want $1 ($2)"
}
want 0 "no collector"
"$HEAPSCOPE" record -p "$tpid" -d 120 -o "$work/c1.folded" 2>"$work/c1.err" &
c1=$!
want 1 "one collector"
grep -q "BPF not available" "$work/c1.err" && skip "$(head -1 "$work/c1.err")"
"$HEAPSCOPE" record -p "$tpid" -d 120 -o "$work/c2.folded" 2>"$work/c2.err" &
c2=$!
for _ in $(seq 1 100); do grep -q "recording\|attached\|Ctrl" "$work/c2.err" && break; sleep 0.1; done
sleep 2
want 1 "two collectors"
kill -TERM "$c1"; wait "$c1"; c1=""
sleep 1
want 1 "first stopped by SIGTERM, second still attached"
kill -KILL "$c2"; wait "$c2" 2>/dev/null; c2=""
want 0 "second killed by SIGKILL"
"$HEAPSCOPE" record -p "$tpid" -d 1 -o "$work/c3.folded" 2>"$work/c3.err" ||
	fail "record -d 1 failed"
want 0 "after a recording that ended by itself"
grep -q mismatch "$work/t.out" && fail "heapscope_collector_attached() disagrees"
echo "semaphore trace: $(grep '^sem' "$work/t.out" | tr '\n' ' ')"
exit 0
