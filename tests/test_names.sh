#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Demangling end to end (issue 17, item 1; root, BPF): names_target (C++,
# -O2 -g) preloaded with libheapscope.so keeps 32 MiB live from
# app::Table::insert(unsigned long); `heapscope record` must name that
# frame demangled in the folded profile, and the pprof profile must carry
# it as Function.name with the mangled _ZN3app5Table6insertEm as
# Function.system_name (read with go tool pprof -raw).
# Exit 77 = skip (not root / no BPF / no go), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3
DEM='app::Table::insert(unsigned long)'
MANGLED=_ZN3app5Table6insertEm

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
command -v go >/dev/null || skip "go (golang-go) not installed: go tool pprof"
# The symbol the test looks for must be in the binary as mangled.
nm "$TARGET" | grep -q " $MANGLED\$" || { echo "FAIL: $TARGET has no $MANGLED"; exit 1; }

work=$(mktemp -d)
tpid=""
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

env HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=42 LD_PRELOAD="$LIB" \
	"$TARGET" >"$work/target.out" 2>"$work/target.err" &
tpid=$!
for _ in $(seq 1 200); do
	grep -q '^ready' "$work/target.out" 2>/dev/null && break
	sleep 0.05
done
grep -q '^ready' "$work/target.out" || { echo "FAIL: target not ready"; cat "$work/target.err"; exit 1; }

# The live heap comes from the registry at attach: a short record suffices.
"$HEAPSCOPE" record -p "$tpid" -d 1 -o "$work/heap.folded" 2>"$work/rec1.err" ||
	{ echo "FAIL: record (folded)"; cat "$work/rec1.err"; exit 1; }
"$HEAPSCOPE" record -p "$tpid" -d 1 --format pprof -o "$work/heap.pb.gz" \
	2>"$work/rec2.err" || { echo "FAIL: record (pprof)"; cat "$work/rec2.err"; exit 1; }

fail=0
echo "--- folded"
cat "$work/heap.folded"
# A stack ...;main;app::Table::insert(unsigned long) with 32 MiB estimated
# (any positive value will do here: e2e_record checks the estimate).
if ! awk -v f="$DEM" '{ v = $NF; $NF = ""; sub(/ +$/, "");
		n = split($0, fr, ";"); for (i = 2; i <= n; i++)
			if (fr[i] == f && fr[i - 1] == "main" && v > 0) ok = 1 }
		END { exit !ok }' "$work/heap.folded"; then
	echo "FAIL: no folded stack main;$DEM"; fail=1
fi
if grep -q "$MANGLED" "$work/heap.folded"; then
	echo "FAIL: folded output still has $MANGLED"; fail=1
fi

export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local
go tool pprof -raw "$work/heap.pb.gz" >"$work/raw.txt" 2>"$work/pprof.err" ||
	{ echo "FAIL: go tool pprof -raw"; cat "$work/pprof.err"; exit 1; }
echo "--- pprof -raw (locations)"
sed -n '/^Locations/,/^Mappings/p' "$work/raw.txt"
# -raw prints a location's line as "NAME FILE:LINE s=START(SYSTEM_NAME)",
# the (SYSTEM_NAME) only when it differs from the name.
if ! grep -F "$DEM " "$work/raw.txt" | grep -qE " s=[0-9]+\($MANGLED\)\$"; then
	echo "FAIL: pprof has no function named '$DEM' with system_name $MANGLED"
	fail=1
fi
# A C name is its own system name: main has no (SYSTEM_NAME).
if ! grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ main .* s=[0-9]+$' "$work/raw.txt"; then
	echo "FAIL: pprof's main should have system_name = name"; fail=1
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
