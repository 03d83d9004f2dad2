#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Impossible sizes fail at once and commit nothing (issue 14 item 2).
# Runs test_sizes (C entry points) and sizes_new (C++ operator new) inside
# a memory cgroup v1 limited to 256 MiB (and as much memory+swap), so a
# regression that commits metadata in proportion to the request, or
# hands out memory the machine cannot back, gets the test OOM-killed and
# not the host:
#   1. under the host's overcommit policy (normally the heuristic, 0);
#   2. as root, under strict overcommit (vm.overcommit_memory=2), set for
#      the few milliseconds these programs take and restored on every
#      exit path: a trap, and a watchdog (own session) that restores it
#      if this script is killed outright.  A lock serialises the window
#      between tests that change the setting.
# Exit 77 = skip (not root, no memory cgroup v1); a failure when CI=true.
# usage: test_sizes.sh TEST_SIZES SIZES_NEW
set -u
TEST=$1 NEW=$2
OVERCOMMIT=/proc/sys/vm/overcommit_memory
LOCK=/run/lock/heapscope-overcommit.lock
CGROOT=/sys/fs/cgroup/memory

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ -x "$TEST" ] && [ -x "$NEW" ] || { echo "FAIL: $TEST or $NEW missing"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root (memory cgroup, vm.overcommit_memory)"
[ -w "$CGROOT/cgroup.procs" ] || [ -w "$CGROOT/tasks" ] ||
	skip "no writable cgroup v1 memory controller at $CGROOT"

cg=$CGROOT/heapscope-test-$$
marker=/run/lock/heapscope-overcommit-restore.$$
watchdog="" restored=1 old_mode=""
restore_mode() {
	if [ $restored = 0 ]; then
		echo "$old_mode" >$OVERCOMMIT
		restored=1
		rm -f "$marker"
		# its own process group (setsid): the shell and its sleep
		[ -n "$watchdog" ] && kill -- -"$watchdog" 2>/dev/null
		watchdog=""
		echo "vm.overcommit_memory restored to $(cat $OVERCOMMIT)"
	fi
}
cleanup() {
	restore_mode
	# only our children ever join the cgroup
	if [ -d "$cg" ]; then
		for p in $(cat "$cg/tasks" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		for _ in $(seq 1 50); do
			rmdir "$cg" 2>/dev/null && break
			sleep 0.1
		done
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir "$cg" || skip "cannot create $cg"
echo 256M >"$cg/memory.limit_in_bytes" || { echo "FAIL: cannot limit $cg"; exit 1; }
if [ -e "$cg/memory.memsw.limit_in_bytes" ]; then
	echo 256M >"$cg/memory.memsw.limit_in_bytes" || { echo "FAIL: memsw limit"; exit 1; }
fi

fail=0
# run_cg WHAT cmd...: cmd in the cgroup; 0 pass, 77 skip, else a failure
run_cg() {
	local what=$1
	shift
	local before after rc
	before=$(cat "$cg/memory.failcnt")
	sh -c 'echo $$ >"$0/tasks" && exec "$@"' "$cg" "$@"
	rc=$?
	after=$(cat "$cg/memory.failcnt")
	if [ $rc = 77 ]; then
		echo "($what: skipped)"
		return 0
	fi
	if [ $rc -ge 128 ]; then
		echo "FAIL: $what killed by signal $((rc - 128)) (memory cgroup limit hit $((after - before)) times: the allocator committed memory it was not asked to use)"
		fail=1
	elif [ $rc != 0 ]; then
		echo "FAIL: $what exited $rc"
		fail=1
	fi
}

phase() {
	echo "=== vm.overcommit_memory=$(cat $OVERCOMMIT) HEAPSCOPE_SAMPLE_RATE=${HEAPSCOPE_SAMPLE_RATE:-(default)}"
	run_cg "test_sizes impossible" "$TEST" impossible
	run_cg "test_sizes grant" "$TEST" grant
	# shellcheck disable=SC2046
	run_cg "sizes_new" "$NEW" $("$TEST" list 2>/dev/null)
}

phase

# strict overcommit: the whole host is under it while set, so only for
# these runs, and only with room left for the rest of the host
exec 9>"$LOCK"
flock -w 120 9 || { echo "FAIL: cannot lock $LOCK"; exit 1; }
old_mode=$(cat $OVERCOMMIT)
if [ "$old_mode" = 2 ]; then
	echo "(the host already runs strict overcommit: phase 1 covered it)"
else
	limit=$(awk '/^CommitLimit:/ {print $2}' /proc/meminfo)
	used=$(awk '/^Committed_AS:/ {print $2}' /proc/meminfo)
	room_mib=$(((limit - used) / 1024))
	if [ $room_mib -lt 2048 ]; then
		[ $fail = 0 ] || exit 1
		skip "strict overcommit would leave the host ${room_mib} MiB of CommitLimit (< 2 GiB); not switching"
	fi
	echo "$old_mode" >"$marker"
	setsid sh -c 'sleep 60; if [ -e "$1" ]; then cat "$1" >'$OVERCOMMIT'; rm -f "$1"; fi' \
		sh "$marker" </dev/null >/dev/null 2>&1 &
	watchdog=$!
	restored=0
	echo 2 >$OVERCOMMIT
	phase
	restore_mode
fi
flock -u 9

[ $fail = 0 ] && echo "PASS"
exit $fail
