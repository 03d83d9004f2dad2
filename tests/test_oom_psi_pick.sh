#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_oom_psi_pick.sh HEAPSCOPE LIB NEAR FAR - which process a PSI
# wake-up snapshots, end to end (issue 18 gap 3; root, BPF, cgroup v1,
# PSI).  Two followed processes in two v1 memory cgroups:
#   - near: NEAR (tests/programs/oom_grow.c, 16 MiB held, never told to
#     grow) in a cgroup whose limit is set to its usage / 0.7;
#   - far: FAR (hold_100mib: a 100 MiB heap, the larger) under 1 GiB;
# the daemon runs with --oom-threshold 0.95, so neither is captured for
# its limit.  Then a third cgroup (16 MiB, no heapscope) rereads a 96 MiB
# file it wrote: its reclaim stalls the system (/proc/pressure/memory's
# "some" total grows by about a second per 4 s here) and the daemon's PSI
# trigger fires.  The first psi snapshot must be the near process's (the
# largest heap would be far's).  The pressure is stopped at that
# snapshot (with near in cooldown, the next wake-up would rightly take
# far).  Every cgroup is removed on exit (trap); clean page cache is all
# the pressure cgroup overflows, and the test checks that no OOM killer
# touched near or far (oom_kill 0 in their cgroups, both alive).
# Exit 77 = skip, a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 NEAR=$3 FAR=$4
. "$(dirname "$0")/lib.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF and cgroups"
command -v curl >/dev/null || skip "no curl"
MEMCG=/sys/fs/cgroup/memory
[ -w $MEMCG/cgroup.procs ] || skip "no cgroup v1 memory controller at $MEMCG"
[ -r /proc/pressure/memory ] || skip "no PSI (/proc/pressure/memory)"
work=$(mktemp -d)
chmod 755 "$work"
file=/var/tmp/hs-psi-pick-$$.bin # on disk: rereads must fault
cgs=("$MEMCG/hs-psi-near-$$" "$MEMCG/hs-psi-far-$$" "$MEMCG/hs-psi-press-$$")
dpid="" pids=()
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for cg in "${cgs[@]}"; do
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
	done
	wait 2>/dev/null
	for cg in "${cgs[@]}"; do
		for _ in $(seq 1 50); do
			[ -d "$cg" ] || break
			rmdir "$cg" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$cg" ] && echo "warning: could not remove $cg" >&2
	done
	rm -rf "$work" "$file"
}
trap cleanup EXIT
for cg in "${cgs[@]}"; do
	mkdir "$cg" || skip "cannot create a memory cgroup under $MEMCG"
	echo 0 >"$cg/memory.oom_control" # its own OOM killer, never the host's
done
near_cg=${cgs[0]} far_cg=${cgs[1]} press_cg=${cgs[2]}
echo $((1 << 30)) >"$near_cg/memory.limit_in_bytes" # set to usage / 0.7 below
echo $((1 << 30)) >"$far_cg/memory.limit_in_bytes"
echo $((16 << 20)) >"$press_cg/memory.limit_in_bytes"

hs_start_daemon "$work/d.err" --lib "$LIB" --no-copies --oom-threshold 0.95 --oom-cooldown 3600 -v
grep -q "no PSI trigger" "$work/d.err" && skip "$(grep 'no PSI trigger' "$work/d.err")"
B=http://127.0.0.1:$port

# run_in CG NAME PROGRAM: PROGRAM under LIB in CG, stdin held open
run_in() {
	mkfifo "$work/$2.in"
	(
		echo "$BASHPID" >"$1/cgroup.procs" || exit 4
		exec env LD_PRELOAD="$LIB" "$3"
	) <"$work/$2.in" >"$work/$2.out" 2>&1 &
	pids+=($!)
	eval "exec {fd_$2}>\"\$work/\$2.in\""
	for _ in $(seq 1 200); do
		grep -q '^ready' "$work/$2.out" && break
		sleep 0.05
	done
	grep -q '^ready' "$work/$2.out" || fail "$2 not ready: $(cat "$work/$2.out")"
	tpid=${pids[-1]}
	# followed from the first request that names it
	c=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 30 \
		"$B/debug/heapscope/rss?pid=$tpid")
	[ "$c" = 200 ] || fail "rss?pid=$tpid ($2) -> $c: $(cat "$work/body")"
}
run_in "$near_cg" near "$NEAR"
near=$tpid
run_in "$far_cg" far "$FAR"
far=$tpid
u=$(cat "$near_cg/memory.usage_in_bytes")
echo $((u * 10 / 7)) >"$near_cg/memory.limit_in_bytes" || fail "cannot set near's limit"
echo "near $near: usage $u of $(cat "$near_cg/memory.limit_in_bytes");" \
	"far $far: usage $(cat "$far_cg/memory.usage_in_bytes") of 1 GiB"
sleep 1.5 # a period of the watch with the new limit (cgroups re-read each 1 s)

# the pressure: reread a file bigger than the cgroup, two readers.  The
# file is written here, outside the small cgroup, synced and dropped from
# the page cache: cgroup v1 has no dirty-page throttling, so the readers
# find only clean pages to reclaim.
dd if=/dev/urandom of="$file" bs=1M count=96 status=none || fail "cannot write $file"
sync "$file" || fail "cannot sync $file"
dd if="$file" iflag=nocache count=0 status=none # drops the file's cache
(
	echo "$BASHPID" >"$press_cg/cgroup.procs" || exit 4
	for _ in 1 2; do
		(while :; do dd if="$file" of=/dev/null bs=1M status=none; done) &
	done
	wait
) &
pids+=($!)
psi0=$(awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/memory)
got=""
for _ in $(seq 1 300); do # 30 s
	curl -sf --max-time 30 "$B/debug/heapscope/oom" >"$work/oom.json" || fail "/debug/heapscope/oom failed"
	got=$(python3 - "$work/oom.json" "$near" "$far" <<'PY'
import json, sys
snaps = json.load(open(sys.argv[1]))["snapshots"]
ours = {int(sys.argv[2]), int(sys.argv[3])}
psi = sorted((s for s in snaps if s["reason"] == "psi" and s["pid"] in ours),
             key=lambda s: s["id"])
print(psi[0]["pid"] if psi else "")
PY
)
	[ -n "$got" ] && break
	sleep 0.1
done
for cg in "$press_cg"; do
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
done
psi1=$(awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/memory)
echo "system memory stall during the pressure: $(((psi1 - psi0) / 1000)) ms"
[ -n "$got" ] || fail "no psi snapshot in 30 s: $(cat "$work/oom.json")"
python3 - "$work/oom.json" "$near" "$far" <<'PY' || exit 1
import json, sys
snaps = json.load(open(sys.argv[1]))["snapshots"]
near, far = int(sys.argv[2]), int(sys.argv[3])
psi = sorted((s for s in snaps if s["reason"] == "psi" and s["pid"] in (near, far)),
             key=lambda s: s["id"])
first = psi[0]
print(f"first psi snapshot: pid {first['pid']} ({'near' if first['pid'] == near else 'far'}),"
      f" usage {first['usage_bytes']} of {first['limit_bytes']}, heap {first['heap_inuse_bytes']}")
assert first["pid"] == near, "the PSI snapshot is not of the near-limit process"
assert first["cgroup_version"] == 1
assert 0.5 <= first["usage_bytes"] / first["limit_bytes"] < 0.95
assert not any(s["reason"] == "cgroup_limit" and s["pid"] in (near, far) for s in snaps)
PY
# near and far must have lived through it.  The pressure cgroup's own
# killer may take one of its readers (6.18 charges the page cache's
# xarray nodes as kmem at the limit, and a charge that finds nothing to
# reclaim that instant kills: dmesg shows dd in xas_nomem); that kill
# stays inside its 16 MiB and the reader loop starts another dd.
for cg in "$near_cg" "$far_cg"; do
	k=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control")
	[ "${k:-0}" = 0 ] || fail "an OOM kill in $cg"
done
kill -0 "$near" 2>/dev/null || fail "near ($near) is gone"
kill -0 "$far" 2>/dev/null || fail "far ($far) is gone"
echo PASS
