#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_host_profile.sh HEAPSCOPE LIB HOLD - issue 16 item 10: the host
# profile.  Three targets hold 100 MiB each (hold_100mib, 1600 blocks of
# 64 KiB, never freed), started before the daemon so that their heaps are
# read from the registry and do not change afterwards: A (hold_100mib,
# root), B (a copy named hold_other, root, moved into the cgroup v2 path
# /hs-host-PID.service/docker-ID.scope), C (hold_100mib run by nobody);
# D (hold_100mib, root) starts after the daemon, so its 100 MiB are
# allocations the daemon counted.  The daemon listens on TCP and on a
# unix socket.
#   - GET /debug/pprof/heap without pid (decoded with go tool pprof -raw):
#     samples of A, B, C and D and nothing else, each labelled pid, comm, exe,
#     cgroup as /proc says (read here, independently), B also
#     container_id=ID and systemd_unit=hs-host-PID.service, the others
#     neither; per process, inuse_space equal to that of its own profile
#     (?pid=N; the same registry, nothing changed between) and within 5
#     sigma of 100 MiB (sigma <= sqrt(T*M), DESIGN.md section 1);
#   - the per-pid profiles carry the same labels;
#   - go tool pprof -tagfocus=pid=N keeps exactly N's samples;
#   - /targets labels each pid with the same values under the same names;
#   - allocs without pid: alloc_space per process equal to the per-pid
#     allocs profile's: 0 for A, B, C (all allocated before the daemon),
#     D's within 5 sigma of 100 MiB;
#   - ?format=folded: every line under a root frame "COMM (PID)", the
#     lines of a process summing to its per-pid folded total; ?debug=1
#     text; ?seconds=1: 200 after >= 1 s, every process's inuse 0 (none
#     changed); allocs?window= without pid 400; /debug/pprof/ links
#     the host profile;
#   - over the unix socket root sees A, B, C and D, nobody only C.
# Exit 77 = skip (not root / no BPF / no go, curl, setpriv, python3), a
# failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 HOLD=$3
T=65536 TRUTH=$((100 * 1024 * 1024)) R=65536 NOBODY=65534
. "$(dirname "$0")/lib.sh"
hs_need_bpf
for t in go curl setpriv python3; do
	hs_need_cmd $t $t
done

work=$(mktemp -d)
chmod 755 "$work"
export PPROF_TMPDIR=$work HOME=$work GOCACHE=$work/gocache
dpid="" tpids=() cg="" cgmnt=""
cleanup() {
	for p in "${tpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	if [ -n "$cg" ]; then
		rmdir "$cg/docker-$CID.scope" "$cg" 2>/dev/null
	fi
	[ -n "$cgmnt" ] && umount "$cgmnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- daemon log"; tail -20 "$work/d.err" 2>/dev/null
	exit 1
}
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }

# nobody must reach the binaries: copies in a 0755 directory
mkdir -m 755 "$work/bin" "$work/run"
cp "$LIB" "$work/bin/libheapscope.so"
cp "$HOLD" "$work/bin/hold_100mib"
cp "$HOLD" "$work/bin/hold_other"
chmod 755 "$work/bin/"*
LIB=$work/bin/libheapscope.so

start_target() { # out binary seed [setpriv args...]
	local out=$1 bin=$2 seed=$3; shift 3
	"$@" env HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=$seed \
		LD_PRELOAD="$LIB" "$bin" >"$out" 2>&1 &
	tpids+=("$!")
	for _ in $(seq 1 200); do
		if grep -q '^ready' "$out"; then
			# the target's own pid (it prints it), not a wrapper's
			tpid=$(awk '/^ready/ { print $2 }' "$out")
			tpids+=("$tpid")
			return 0
		fi
		sleep 0.05
	done
	fail "target $bin did not start: $(cat "$out")"
}
start_target "$work/a.out" "$work/bin/hold_100mib" 7
A=$tpid
start_target "$work/b.out" "$work/bin/hold_other" 8
B=$tpid
start_target "$work/c.out" "$work/bin/hold_100mib" 9 as_nobody
C=$tpid
[ "$(stat -c %u /proc/$C)" = $NOBODY ] || fail "C runs as uid $(stat -c %u /proc/$C)"

# B into a cgroup v2 path naming a systemd unit and a docker container
# (the host's cgroup2 hierarchy, or one mounted here when only v1 is)
CID=$(printf '%064x' $((0x5eed0000 + $$)))
UNIT=hs-host-$$.service
root2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
if [ -z "$root2" ]; then
	mkdir "$work/cg2"
	mount -t cgroup2 none "$work/cg2" || fail "cannot mount a cgroup2 hierarchy"
	cgmnt=$work/cg2 root2=$work/cg2
fi
cg=$root2/$UNIT
mkdir -p "$cg/docker-$CID.scope" || fail "cannot make $cg"
echo "$B" >"$cg/docker-$CID.scope/cgroup.procs" || fail "cannot move $B into $cg"
grep -qx "0::/$UNIT/docker-$CID.scope" /proc/$B/cgroup || fail "B's cgroup: $(grep '^0::' /proc/$B/cgroup)"

SOCK=$work/run/http.sock
hs_start_daemon "$work/d.err" --lib "$LIB" --no-copies --listen "unix:$SOCK"
start_target "$work/d.out" "$work/bin/hold_100mib" 10
D=$tpid
sleep 0.5 # let the ring buffer drain the last of D's 1600 blocks

get() { # file query [curl args]: $URL$query into $work/file, must be 200
	local f=$1 q=$2 c; shift 2
	c=$(curl -s -o "$work/$f" -w '%{http_code}' --max-time 20 "$@" "$URL$q")
	[ "$c" = 200 ] || fail "$q gave HTTP $c: $(head -c 300 "$work/$f")"
}
# samples FILE [pprof args]: one line per sample,
# "pid|comm|exe|cgroup|container_id|systemd_unit|alloc_space|inuse_space"
# (the string labels; Go's four types in their order)
samples() {
	local f=$1; shift
	go tool pprof -raw "$@" "$work/$f" 2>/dev/null | awk '
	/^Samples:/ { s = 1; getline; next }
	/^Locations/ { s = 0 }
	s && /^ *-?[0-9]+( +-?[0-9]+)*:/ { as = $2; is = $4; next }
	s && /comm:\[/ {
		delete lab; line = $0
		while (match(line, /[a-z_]+:\[[^]]*\]/)) {
			kv = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
			k = substr(kv, 1, index(kv, ":[") - 1)
			lab[k] = substr(kv, index(kv, ":[") + 2, length(kv) - index(kv, ":[") - 2)
		}
		print lab["pid"] "|" lab["comm"] "|" lab["exe"] "|" lab["cgroup"] "|" \
			lab["container_id"] "|" lab["systemd_unit"] "|" as "|" is
	}'
}
total() { # samples-output pid field(7 alloc, 8 inuse)
	awk -F'|' -v p="$2" -v f="$3" '$1 == p { t += $f } END { printf "%d\n", t }' "$1"
}
check_bounds() { # got label
	awk -v got="$1" -v truth=$TRUTH -v T=$T -v r=$R -v what="$2" 'BEGIN {
		M = truth / r * (r + 1); tol = 5 * sqrt(T * M);
		d = got - truth; if (d < 0) d = -d;
		printf "ok: %s: estimated %.0f bytes, true %.0f, |diff| %.0f, 5 sigma %.0f\n",
			what, got, truth, d, tol;
		exit (d <= tol) ? 0 : 1 }' || fail "$2 outside 5 sigma"
}
# the labels /proc gives pid (what every sample of it must carry)
want_labels() {
	local p=$1 id="" unit=""
	[ "$p" = "$B" ] && id=$CID unit=$UNIT
	echo "$p|$(cat /proc/$p/comm)|$(readlink /proc/$p/exe)|$(sed -n 's/^0:://p' /proc/$p/cgroup)|$id|$unit"
}
[ "$(cut -d'|' -f2 <<<"$(want_labels $B)")" = hold_other ] || fail "B's comm"

# the host profile over TCP (no token: every process)
get host.pb /debug/pprof/heap
samples host.pb >"$work/host.s"
[ -s "$work/host.s" ] || fail "host profile has no labelled samples"
got=$(cut -d'|' -f1 "$work/host.s" | sort -un | tr '\n' ' ')
want=$(printf '%s\n' $A $B $C $D | sort -n | tr '\n' ' ')
[ "$got" = "$want" ] || fail "host profile pids: $got (want $want)"
for p in $A $B $C $D; do
	w=$(want_labels $p)
	bad=$(awk -F'|' -v p=$p -v w="$w" '$1 == p && $1"|"$2"|"$3"|"$4"|"$5"|"$6 != w' "$work/host.s" | head -1)
	[ -z "$bad" ] || fail "host profile: pid $p labelled '$bad', want '$w'"
	echo "ok: host profile: pid $p labels $w"
	get p$p.pb "/debug/pprof/heap?pid=$p"
	samples p$p.pb >"$work/p$p.s"
	bad=$(awk -F'|' -v w="$w" '$1"|"$2"|"$3"|"$4"|"$5"|"$6 != w' "$work/p$p.s" | head -1)
	[ -z "$bad" ] && [ -s "$work/p$p.s" ] || fail "heap?pid=$p: labelled '$bad', want '$w'"
	h=$(total "$work/host.s" $p 8) s=$(total "$work/p$p.s" $p 8)
	[ "$h" = "$s" ] || fail "pid $p: inuse_space $h in the host profile, $s in its own"
	check_bounds "$h" "pid $p inuse_space (host profile = its own profile)"
	# -tagfocus=pid=N: N's samples only, all of them
	samples host.pb -tagfocus=pid=$p >"$work/f$p.s"
	[ "$(cut -d'|' -f1 "$work/f$p.s" | sort -u)" = "$p" ] || fail "-tagfocus=pid=$p kept other pids"
	[ "$(total "$work/f$p.s" $p 8)" = "$h" ] || fail "-tagfocus=pid=$p: $(total "$work/f$p.s" $p 8), want $h"
done
echo "ok: -tagfocus=pid=N keeps N's samples"

# /targets: the same label names and values
curl -sf "$URL/targets" >"$work/targets.json" || fail "/targets"
python3 - "$work/targets.json" "$work/tlabels" <<'EOF' || fail "/targets unreadable"
import json, sys
with open(sys.argv[2], "w") as out:
    for g in json.load(open(sys.argv[1])):
        l = g["labels"]
        out.write("|".join(l.get(k, "") for k in ("pid", "comm", "exe", "cgroup",
                  "container_id", "systemd_unit")) + "\n")
EOF
for p in $A $B $C $D; do
	grep -qxF "$(want_labels $p)" "$work/tlabels" || fail "/targets labels pid $p otherwise: $(grep "^$p|" "$work/tlabels")"
done
echo "ok: /targets and the profiles label each pid alike"

# allocs without pid: alloc_space as each process's own allocs profile
get hosta.pb /debug/pprof/allocs
samples hosta.pb >"$work/hosta.s"
go tool pprof -raw "$work/hosta.pb" 2>/dev/null | grep -q 'alloc_space/bytes\[dflt\]' || fail "host allocs default type"
for p in $A $B $C $D; do
	get a$p.pb "/debug/pprof/allocs?pid=$p"
	samples a$p.pb >"$work/a$p.s"
	h=$(total "$work/hosta.s" $p 7) s=$(total "$work/a$p.s" $p 7)
	[ "$h" = "$s" ] || fail "pid $p: alloc_space $h in the host allocs, $s in its own"
	if [ $p = $D ]; then
		check_bounds "$h" "pid $p alloc_space (host allocs = its own)"
	else
		[ "$h" = 0 ] || fail "pid $p allocated before it was followed: alloc_space $h"
	fi
done
echo "ok: host allocs: alloc_space per process = its own allocs profile"

# folded: a root frame "COMM (PID)" per process
get host.folded "/debug/pprof/heap?format=folded"
for p in $A $B $C $D; do
	frame="$(cat /proc/$p/comm) ($p)"
	get p$p.folded "/debug/pprof/heap?pid=$p&format=folded"
	h=$(awk -v f="$frame;" 'index($0, f) == 1 { t += $NF } END { printf "%d\n", t }' "$work/host.folded")
	s=$(awk '{ t += $NF } END { printf "%d\n", t }' "$work/p$p.folded")
	[ "$h" = "$s" ] && [ "$h" -gt 0 ] || fail "folded: '$frame' lines sum to $h, its own profile to $s"
	grep -qF "$frame;_start;" "$work/host.folded" || grep -qF "$frame;" "$work/host.folded" || fail "folded lacks '$frame'"
done
n=$(grep -cvE "^hold_(100mib|other) \(($A|$B|$C|$D)\);" "$work/host.folded")
[ "$n" = 0 ] || fail "folded: $n lines without a process root frame"
echo "ok: folded host profile: one root frame per process, totals as the per-pid profiles"
get host.txt "/debug/pprof/heap?debug=1"
grep -q '^# heapscope: host profile of 4 followed processes' "$work/host.txt" || fail "debug=1: $(head -2 "$work/host.txt")"

# ?seconds=1: the per-process difference; nothing changed
s0=$(date +%s%N)
get hdelta.pb "/debug/pprof/heap?seconds=1"
s1=$(date +%s%N)
[ $(((s1 - s0) / 1000000)) -ge 1000 ] || fail "heap?seconds=1 answered before 1 s"
samples hdelta.pb >"$work/hdelta.s"
for p in $A $B $C $D; do
	[ "$(total "$work/hdelta.s" $p 8)" = 0 ] || fail "heap?seconds=1: pid $p inuse $(total "$work/hdelta.s" $p 8)"
done
echo "ok: heap?seconds=1 without pid: every process 0"
curl -sf "$URL/debug/pprof/" | grep -qF 'href="/debug/pprof/heap?debug=1"' ||
	fail "/debug/pprof/ does not link the host profile"
c=$(curl -s -o /dev/null -w '%{http_code}' "$URL/debug/pprof/allocs?window=1")
[ "$c" = 400 ] || fail "allocs?window=1 without pid gave $c"

# over the unix socket: root every process, nobody its own
curl -s --max-time 20 --unix-socket "$SOCK" -o "$work/uroot.pb" http://localhost/debug/pprof/heap ||
	fail "root over the socket"
samples uroot.pb >"$work/uroot.s"
[ "$(cut -d'|' -f1 "$work/uroot.s" | sort -un | tr '\n' ' ')" = "$want" ] ||
	fail "root over the socket sees $(cut -d'|' -f1 "$work/uroot.s" | sort -un | tr '\n' ' ')"
as_nobody curl -s --max-time 20 --unix-socket "$SOCK" http://localhost/debug/pprof/heap \
	>"$work/unobody.pb" || fail "nobody over the socket"
samples unobody.pb >"$work/unobody.s"
[ "$(cut -d'|' -f1 "$work/unobody.s" | sort -u)" = "$C" ] ||
	fail "nobody's host profile holds pids: $(cut -d'|' -f1 "$work/unobody.s" | sort -u | tr '\n' ' ')"
[ "$(total "$work/unobody.s" $C 8)" = "$(total "$work/p$C.s" $C 8)" ] || fail "nobody's view of C"
as_nobody curl -s --max-time 20 --unix-socket "$SOCK" "http://localhost/debug/pprof/heap?format=folded" \
	>"$work/unobody.folded"
grep -qvE "^hold_100mib \($C\);" "$work/unobody.folded" && fail "nobody's folded host profile holds other processes"
echo "ok: unix socket: root sees $want, nobody only $C"
kill -0 "$dpid" || fail "daemon died"
echo PASS
