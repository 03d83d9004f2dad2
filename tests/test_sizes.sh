#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Impossible sizes fail at once and commit nothing (issue 14 item 2).
# Runs test_sizes (C entry points) and sizes_new (C++ operator new) inside
# a memory cgroup v1 limited to 256 MiB (and as much memory+swap), so a
# regression that commits metadata in proportion to the request, or
# hands out memory the machine cannot back, gets the test OOM-killed and
# not the host:
#   1. under the host's overcommit policy (normally the heuristic, 0);
#   2. as root, under strict overcommit (vm.overcommit_memory=2), set by
#      with_overcommit for the run of each program only (milliseconds)
#      and put back by it as the program exits.  The setting is
#      host-wide, and under it with CommitLimit used up nothing can fork,
#      so nothing here forks while it is set: if with_overcommit is
#      killed, this script restores it with shell builtins (trap), and a
#      watchdog started before (own session, builtins only) restores it
#      after 60 s (HS_OVERCOMMIT_WATCHDOG_S) if this script is killed too.  A lock serialises tests
#      that change the setting.
# Exit 77 = skip (not root, no memory cgroup v1); a failure when CI=true.
# usage: test_sizes.sh TEST_SIZES SIZES_NEW WITH_OVERCOMMIT
set -u
TEST=$1 NEW=$2 WITH=$3
OVERCOMMIT=/proc/sys/vm/overcommit_memory
LOCK=/run/lock/heapscope-overcommit.lock
CGROOT=/sys/fs/cgroup/memory

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
for f in "$TEST" "$NEW" "$WITH"; do
	[ -x "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || skip "needs root (memory cgroup, vm.overcommit_memory)"
[ -w "$CGROOT/cgroup.procs" ] || [ -w "$CGROOT/tasks" ] ||
	skip "no writable cgroup v1 memory controller at $CGROOT"

cg=$CGROOT/heapscope-test-$$
marker=/run/lock/heapscope-overcommit-restore.$$
fifo=/run/lock/heapscope-overcommit-wait.$$
watchdog="" old_mode=""
# builtins only: under strict overcommit this shell may not fork
restore_mode() {
	local now
	[ -n "$old_mode" ] || return 0
	read -r now <$OVERCOMMIT
	if [ "$now" != "$old_mode" ]; then
		echo "$old_mode" >$OVERCOMMIT
		echo "vm.overcommit_memory was $now after a run: restored to $old_mode"
		fail=1
	fi
}
cleanup() {
	restore_mode
	# its own process group (setsid): the shell and nothing else
	[ -n "$watchdog" ] && kill -- -"$watchdog" 2>/dev/null
	rm -f "$marker" "$fifo"
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

# cgroups of runs killed outright (their script is gone), once empty
for d in "$CGROOT"/heapscope-test-*; do
	[ -d "$d" ] && ! kill -0 "${d##*-}" 2>/dev/null && rmdir "$d" 2>/dev/null
done
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

# phase [MODE]: the three programs, each under vm.overcommit_memory=MODE
# when given (the list of sizes is made before, under the current mode
# but for MODE)
phase() {
	local with=()
	[ $# = 1 ] && with=("$WITH" "$1")
	local sizes
	sizes=$("${with[@]}" "$TEST" list 2>/dev/null)
	echo "=== vm.overcommit_memory=${1:-$(cat $OVERCOMMIT)} HEAPSCOPE_SAMPLE_RATE=${HEAPSCOPE_SAMPLE_RATE:-(default)}"
	run_cg "test_sizes impossible" "${with[@]}" "$TEST" impossible
	restore_mode
	run_cg "test_sizes grant" "${with[@]}" "$TEST" grant
	restore_mode
	# shellcheck disable=SC2086
	run_cg "sizes_new" "${with[@]}" "$NEW" $sizes
	restore_mode
}

phase

# strict overcommit, with room left for the rest of the host
exec 9>"$LOCK"
flock -w 120 9 || { echo "FAIL: cannot lock $LOCK"; exit 1; }
read -r old_mode <$OVERCOMMIT
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
	rm -f "$fifo" && mkfifo "$fifo" || { echo "FAIL: mkfifo $fifo"; exit 1; }
	# read -t on a FIFO opened read-write: a 60 s wait with no process
	setsid bash -c 'exec 8<>"$2"; read -r -t "$3" -u 8 _
		[ -e "$1" ] || exit 0
		read -r m <"$1"; echo "$m" >'$OVERCOMMIT'
		rm -f "$1" "$2"; rmdir "$4"' \
		bash "$marker" "$fifo" "${HS_OVERCOMMIT_WATCHDOG_S:-60}" "$cg" \
		</dev/null >/dev/null 2>&1 &
	watchdog=$!
	phase 2
fi
flock -u 9

[ $fail = 0 ] && echo "PASS"
exit $fail
