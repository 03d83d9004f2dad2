#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Swap / residency test (root): makes /dev/zram0 a swap device, runs
# residency_target at sampling period 1 (every allocation sampled, so the
# estimates are exact), and checks that `heapscope record` reports, per call
# site, exactly the resident / swapped / not-resident bytes the target
# arranged (MADV_PAGEOUT, untouched, touched, half touched).  The swap
# device is removed on every exit path (trap).
# Exit 77 = skip (not root, no BPF, zram0 absent or in use); a failure
# when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (swap device, BPF, /proc/kpageflags)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
[ -e /sys/block/zram0 ] || modprobe zram 2>/dev/null
[ -e /sys/block/zram0 ] && [ -b /dev/zram0 ] || skip "no /dev/zram0 (zram module not available)"
if grep -q '^/dev/zram0 ' /proc/swaps || [ "$(cat /sys/block/zram0/disksize)" != 0 ]; then
	skip "/dev/zram0 is in use (swap or disksize set); not touching it"
fi

work=$(mktemp -d)
tpid="" swap_on=0
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	# the target is gone, so its swapped pages are gone too
	if [ $swap_on = 1 ]; then
		swapoff /dev/zram0 2>/dev/null
	fi
	echo 1 >/sys/block/zram0/reset 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo 64M >/sys/block/zram0/disksize || { echo "FAIL: cannot size zram0"; exit 1; }
mkswap /dev/zram0 >/dev/null || { echo "FAIL: mkswap /dev/zram0"; exit 1; }
swapon -p 100 /dev/zram0 || { echo "FAIL: swapon /dev/zram0"; exit 1; }
swap_on=1

HEAPSCOPE_SAMPLE_RATE=1 LD_PRELOAD=$LIB "$TARGET" >"$work/target.out" 2>"$work/target.err" &
tpid=$!
for _ in $(seq 1 300); do
	grep -q '^ready' "$work/target.out" 2>/dev/null && break
	kill -0 "$tpid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^ready' "$work/target.out"; then
	wait "$tpid"; rc=$?; tpid=""
	echo "FAIL: target not ready (exit $rc)"; cat "$work/target.err"; exit 1
fi

fail=0
for v in resident swapped not_resident; do
	"$HEAPSCOPE" record -p "$tpid" -d 1 --value "$v" -o "$work/$v.folded" \
		2>"$work/record.err" || { echo "FAIL: record --value $v"; cat "$work/record.err"; exit 1; }
done
# Sum of a value over the stacks that contain FUNC.
sum_for() {
	awk -v f="$1" '{ n = split($1, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == f) { s += $NF; break } }
		END { printf "%d\n", s }' "$work/$2.folded"
}
while read -r _ site res swp notres; do
	got_r=$(sum_for "$site" resident)
	got_s=$(sum_for "$site" swapped)
	got_n=$(sum_for "$site" not_resident)
	echo "$site: resident $got_r (want $res), swapped $got_s (want $swp), not_resident $got_n (want $notres)"
	if [ "$got_r" != "$res" ] || [ "$got_s" != "$swp" ] || [ "$got_n" != "$notres" ]; then
		fail=1
	fi
done < <(grep '^expect' "$work/target.out")
if [ $fail != 0 ]; then
	echo "FAIL: residency bytes differ"; grep -E 'blocks_' "$work"/*.folded | head -20; exit 1
fi
echo PASS
