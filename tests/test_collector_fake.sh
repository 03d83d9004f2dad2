#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end collector test (root, BPF) against tests/programs/fake_target,
# whose libfakeheapscope.so has 3 registry samples before the attach and
# fires known probes after it.  The folded profile must be exactly the
# expected stacks and values, for --value inuse and --value objects, and the
# collector must stop by itself when the target exits.
# Exit 77 = skip (not root / no BPF), turned into a failure when CI=true.
set -u
HEAPSCOPE=$1 TARGET=$2

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
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

fail() { echo "FAIL: $*"; for f in "$work"/*.err; do echo "--- $f"; cat "$f"; done; exit 1; }

run_case() { # value expected-file [extra args]
	local value=$1 expected=$2 start end rc
	shift 2
	rm -f "$work/target.out" # a previous run's "ready" must not count
	"$TARGET" 1500 >"$work/target.out" 2>"$work/target.err" &
	tpid=$!
	for _ in $(seq 1 100); do
		grep -q '^ready' "$work/target.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q '^ready' "$work/target.out" || fail "fake target did not start"
	start=$(date +%s)
	"$HEAPSCOPE" record -p "$tpid" -d 30 --force "$@" \
		--value "$value" -o "$work/heap.folded" 2>"$work/record.err"
	rc=$?
	end=$(date +%s)
	if [ $rc -ne 0 ] && grep -q "BPF not available" "$work/record.err"; then
		skip "$(head -1 "$work/record.err")"
	fi
	[ $rc -eq 0 ] || fail "heapscope record exited $rc"
	wait "$tpid"; tpid=""
	grep -q '^done' "$work/target.out" || fail "target did not fire its events"
	[ $((end - start)) -lt 20 ] || fail "collector did not stop when the target exited"
	grep -q "exited" "$work/record.err" || fail "no exit notice"
	grep -q " 1 sequence gaps" "$work/record.err" || fail "the lost event was not reported"
	if ! diff -u "$expected" "$work/heap.folded"; then
		fail "--value $value: folded profile differs from the expected one"
	fi
	echo "ok: --value $value $*"
	cat "$work/record.err"
}

cat >"$work/inuse.expected" <<'EOT'
main;site_c 8192
main;mid;site_a 4480
main;fake_lib_frame 2048
main;site_b;[unknown] 1600
main;zlibVersion 112
EOT
cat >"$work/objects.expected" <<'EOT'
main;site_b;[unknown] 100
main;mid;site_a 40
main;zlibVersion 7
main;fake_lib_frame 2
main;site_c 2
EOT
run_case inuse "$work/inuse.expected" --lib libfakeheapscope
run_case objects "$work/objects.expected" --lib libfakeheapscope
# Without --lib: found through its heapscope stapsdt note.
run_case inuse "$work/inuse.expected"

# Another mount namespace: the target's paths do not exist here, so the
# collector must go through /proc/PID/root (attach, registry, symbols).
if unshare --mount --propagation private true 2>/dev/null; then
	mkdir -p "$work/src" "$work/mnt"
	cp "$TARGET" "$(dirname "$TARGET")/libfakeheapscope.so" "$work/src/"
	unshare --mount --propagation private sh -c \
		'mount --bind "$1" "$2" && LD_LIBRARY_PATH="$2" exec "$2/fake_target" 1500' \
		sh "$work/src" "$work/mnt" >"$work/target.out" 2>"$work/target.err" &
	tpid=$!
	for _ in $(seq 1 100); do
		grep -q '^ready' "$work/target.out" 2>/dev/null && break
		sleep 0.05
	done
	[ -e "$work/mnt/fake_target" ] && fail "bind mount leaked into our namespace"
	"$HEAPSCOPE" record -p "$tpid" -d 30 --force -o "$work/heap.folded" \
		2>"$work/record.err" || fail "record in another mount namespace"
	wait "$tpid"; tpid=""
	diff -u "$work/inuse.expected" "$work/heap.folded" ||
		fail "another mount namespace: folded profile differs"
	echo "ok: target in another mount namespace"
else
	echo "note: unshare --mount unavailable; mount-namespace case not run"
fi

# Error paths: no such process; a process without libheapscope.
"$HEAPSCOPE" record -p 999999999 -d 1 >/dev/null 2>"$work/nopid.err" && fail "pid 999999999 accepted"
grep -q "invalid pid\|no process" "$work/nopid.err" || fail "unclear error for a missing pid"
sleep 5 & spid=$!
"$HEAPSCOPE" record -p "$spid" -d 1 >/dev/null 2>"$work/nolib.err" && fail "sleep accepted"
kill $spid 2>/dev/null; wait $spid 2>/dev/null
grep -q "process $spid does not use libheapscope" "$work/nolib.err" || fail "unclear error for a process without libheapscope"
# Unwritable output: refused before attaching.
"$TARGET" 0 >/dev/null 2>&1 & tpid=$!
sleep 0.2
"$HEAPSCOPE" record -p "$tpid" -d 1 -o /nonexistent/dir/x 2>"$work/out.err" && fail "unwritable output accepted"
grep -q "cannot write /nonexistent/dir/x" "$work/out.err" || fail "unclear error for an unwritable output"
kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null; tpid=""
echo "PASS"
