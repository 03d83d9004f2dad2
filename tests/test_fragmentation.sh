#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fragmentation profile (root, BPF): frag_target pins 32 MiB of 256-byte
# spans with one long-lived object each (pin_site) while churn_site's
# objects come and go.  Checks, from the in-process API and from
# `heapscope record --profile fragmentation` (proxy method and
# --value fragmentation_age):
#  - pin_site gets >= 90% of the fragmentation in both attributions;
#  - pin_site's proxy-method estimate is within 25% of the allocator's own
#    central_free_bytes (the unused bytes of the pinned spans);
#  - the collector's pin_site value is within 5% of the in-process one;
#  - big_site's 64 KiB samples, above the default HEAPSCOPE_PROXY_MAX
#    (4096), hold no proxy: absent in-process, 0 in the collector's
#    profile, and the collector reports them as not covered.
# Exit 77 = skip (not root / no BPF), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF and process_vm_readv"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"

work=$(mktemp -d)
tpid=""
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

HEAPSCOPE_SAMPLE_RATE=4096 HEAPSCOPE_SAMPLE_SEED=5 LD_PRELOAD=$LIB "$TARGET" \
	>"$work/target.out" 2>"$work/target.err" &
tpid=$!
for _ in $(seq 1 300); do
	grep -q '^ready' "$work/target.out" 2>/dev/null && break
	kill -0 "$tpid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^ready' "$work/target.out" || { echo "FAIL: target not ready"; cat "$work/target.err"; exit 1; }
for v in fragmentation fragmentation_age; do
	"$HEAPSCOPE" record -p "$tpid" -d 1 --profile fragmentation --value $v \
		-o "$work/$v.folded" 2>"$work/$v.err" || { echo "FAIL: record"; cat "$work/$v.err"; exit 1; }
done
cat "$work/target.out"
echo "--- collector"; grep -E 'pin_site|churn_site' "$work"/*.folded

fail=0
truth=$(awk '$1 == "truth" { print $3 }' "$work/target.out")
field() { awk -v s="$1" -v f="$2" '$1 == "site" && $2 == s { for (i = 3; i < NF; i++) if ($i == f) print $(i + 1) }' "$work/target.out"; }
leaf() { awk -v f="$1" '{ n = split($1, fr, ";"); if (fr[n] == f) s += $2 } END { printf "%d\n", s }' "$work/$2.folded"; }
check() { # description awk-condition
	if awk "BEGIN { exit !($2) }"; then echo "ok: $1"; else echo "FAIL: $1 ($2)"; fail=1; fi
}
pp=$(field pin_site proxy) pa=$(field pin_site age) cp=$(field churn_site proxy) ca=$(field churn_site age)
check "in-process: pin_site share (proxy) >= 90%" "$pp >= 0.9 * ($pp + $cp)"
check "in-process: pin_site share (age) >= 90%" "$pa >= 0.9 * ($pa + $ca)"
check "pin_site proxy estimate within 25% of central_free_bytes" "$pp >= 0.75 * $truth && $pp <= 1.25 * $truth"
check "in-process: big_site (64 KiB, no proxy) not in the profile" "$(field big_site samples) == 0"
check "collector: big_site contributes nothing" "$(leaf big_site fragmentation) == 0"
nc=$(sed -n 's/^heapscope: fragmentation: \([0-9]*\) of .*not covered.*/\1/p' "$work/fragmentation.err")
check "collector: >= 16 samples reported not covered (got ${nc:-none})" "${nc:-0} >= 16"
cpp=$(leaf pin_site fragmentation) cpa=$(leaf pin_site fragmentation_age)
check "collector pin_site (proxy) within 5% of in-process" "$cpp >= 0.95 * $pp && $cpp <= 1.05 * $pp"
check "collector pin_site (age) within 5% of in-process" "$cpa >= 0.95 * $pa && $cpa <= 1.05 * $pa"
[ $fail = 0 ] && echo PASS
exit $fail
