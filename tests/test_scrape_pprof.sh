#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_scrape_pprof.sh HEAPSCOPE LIB HOLD - issue 16 item 9: the daemon's
# /debug/pprof/ follows Go's net/http/pprof conventions.  hold_100mib churn
# starts after the daemon, so its 100 MiB (1600 blocks of 64 KiB, never
# freed) are allocations the daemon counted from the first:
#   - heap and allocs carry alloc_objects, alloc_space, inuse_objects,
#     inuse_space (go tool pprof -raw), default inuse_space / alloc_space;
#   - allocs answers at once (well inside curl's 5 s, where the old
#     default window blocked 10 s) with hold_100mib's alloc_space within
#     5 sigma of 104857600 (sigma <= sqrt(T*M), DESIGN.md section 1), as
#     is heap's inuse_space and alloc_space;
#   - ?seconds=2 is the difference over 2 s: hold_100mib did nothing then,
#     so its alloc_space and inuse_space are exactly 0 while churn_allocs'
#     alloc_space is not; alloc totals never decrease between scrapes;
#   - ?debug=1 is text; allocs?window=1 keeps the window profile's types;
#     malformed debug / seconds+window -> 400; /debug/pprof/ is an HTML
#     index linking the process's profiles.
# Exit 77 = skip (not root / no BPF / no go), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 HOLD=$3
T=65536 TRUTH=$((100 * 1024 * 1024)) R=65536
. "$(dirname "$0")/lib.sh"
hs_need_bpf
hs_need_cmd go "go tool pprof"
hs_need_cmd curl curl

work=$(mktemp -d)
export PPROF_TMPDIR=$work HOME=$work GOCACHE=$work/gocache
dpid="" tpid=""
cleanup() {
	[ -n "$tpid" ] && kill -9 "$tpid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- daemon log"; tail -20 "$work/daemon.err" 2>/dev/null
	exit 1
}

hs_start_daemon "$work/daemon.err" --lib "$LIB" --no-copies
PORT=$port
URL=http://127.0.0.1:$PORT

HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=7 LD_PRELOAD=$LIB "$HOLD" churn \
	>"$work/t.out" 2>&1 &
tpid=$!
for _ in $(seq 1 200); do
	grep -q '^ready' "$work/t.out" && break
	sleep 0.05
done
grep -q '^ready' "$work/t.out" || fail "target not ready"
sleep 0.5 # let the ring buffer drain the last of the 1600 blocks

get() { # name query: fetches $URL$query into $work/name, 5 s at most
	local c
	c=$(curl -s -o "$work/$1" -w '%{http_code}' --max-time 5 "$URL$2")
	[ "$c" = 200 ] || fail "$2 gave HTTP $c: $(head -c 300 "$work/$1")"
}
# value of function fn (cum, bytes) in profile file for sample type st
value() { # file st fn
	go tool pprof -top -unit=B -sample_index="$2" "$work/$1" 2>/dev/null |
		awk -v fn="$3" 'NF >= 6 && $NF == fn { v = $4; sub(/B$/, "", v); print v; f = 1 }
		     END { if (!f) print 0 }' | head -1
}
check_bounds() { # got label
	awk -v got="$1" -v truth=$TRUTH -v T=$T -v r=$R -v what="$2" 'BEGIN {
		M = truth / r * (r + 1); tol = 5 * sqrt(T * M);
		d = got - truth; if (d < 0) d = -d;
		printf "ok: %s: estimated %.0f bytes, true %.0f, |diff| %.0f, 5 sigma %.0f\n",
			what, got, truth, d, tol;
		exit (d <= tol) ? 0 : 1 }' || fail "$2 outside 5 sigma"
}
types() { go tool pprof -raw "$work/$1" 2>/dev/null | awk '/^Samples:/ { getline; print; exit }'; }
# -raw marks the default type [dflt]
HEAP_TYPES="alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt] inuse_requested_space/bytes samples/count"
ALLOCS_TYPES="alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes inuse_requested_space/bytes samples/count"

# heap: Go's types, inuse_space default; alloc and inuse both ~100 MiB
get heap "/debug/pprof/heap?pid=$tpid"
[ "$(types heap)" = "$HEAP_TYPES" ] || fail "heap sample types: $(types heap)"
go tool pprof -top "$work/heap" 2>/dev/null | grep -q '^Type: inuse_space' || fail "heap default type"
check_bounds "$(value heap inuse_space hold_100mib)" "heap inuse_space (hold_100mib)"
check_bounds "$(value heap alloc_space hold_100mib)" "heap alloc_space (hold_100mib)"

# allocs: at once, same types, alloc_space default
get allocs1 "/debug/pprof/allocs?pid=$tpid"
[ "$(types allocs1)" = "$ALLOCS_TYPES" ] || fail "allocs sample types: $(types allocs1)"
go tool pprof -top "$work/allocs1" 2>/dev/null | grep -q '^Type: alloc_space' || fail "allocs default type"
check_bounds "$(value allocs1 alloc_space hold_100mib)" "allocs alloc_space (hold_100mib)"
c1=$(value allocs1 alloc_space churn_allocs)
[ "$c1" -gt 0 ] || fail "allocs: churn_allocs alloc_space $c1"

# ?seconds=2: the difference over 2 s
s0=$(date +%s%N)
curl -s -o "$work/delta" -w '%{http_code}' --max-time 20 \
	"$URL/debug/pprof/allocs?pid=$tpid&seconds=2" >"$work/delta.code"
s1=$(date +%s%N)
[ "$(cat "$work/delta.code")" = 200 ] || fail "allocs?seconds=2: $(cat "$work/delta.code")"
[ $(((s1 - s0) / 1000000)) -ge 2000 ] || fail "allocs?seconds=2 answered before 2 s"
[ "$(types delta)" = "$ALLOCS_TYPES" ] || fail "delta sample types: $(types delta)"
for st in alloc_space inuse_space alloc_objects inuse_objects; do
	v=$(value delta $st hold_100mib)
	[ "$v" = 0 ] || fail "delta: hold_100mib $st $v, not 0"
done
cd2=$(value delta alloc_space churn_allocs)
[ "$cd2" -gt 0 ] || fail "delta: churn_allocs alloc_space $cd2"
echo "ok: allocs?seconds=2: hold_100mib 0 in all four types, churn_allocs $cd2 B allocated"
get allocs2 "/debug/pprof/allocs?pid=$tpid"
c2=$(value allocs2 alloc_space churn_allocs)
[ "$c2" -ge $((c1 + cd2)) ] || fail "alloc totals: $c1 then $c2, with $cd2 between"
echo "ok: churn_allocs alloc_space since followed: $c1 B, then $c2 B (>= $c1 + $cd2)"
get hdelta "/debug/pprof/heap?pid=$tpid&seconds=1"
[ "$(value hdelta inuse_space hold_100mib)" = 0 ] || fail "heap?seconds=1: hold_100mib inuse not 0"
go tool pprof -top "$work/hdelta" 2>/dev/null | grep -q '^Type: inuse_space' || fail "heap delta type"

# ?debug=1: text
for ep in heap allocs; do
	get dbg "/debug/pprof/$ep?pid=$tpid&debug=1"
	ct=$(curl -s -o /dev/null -w '%{content_type}' "$URL/debug/pprof/$ep?pid=$tpid&debug=1")
	case $ct in text/plain*) ;; *) fail "$ep?debug=1 content type $ct" ;; esac
	grep -q 'hold_100mib' "$work/dbg" || fail "$ep?debug=1 lacks hold_100mib"
done
grep -q 'allocated bytes' "$work/dbg" || fail "allocs?debug=1 is not in allocated bytes: $(head -5 "$work/dbg")"
echo "ok: ?debug=1 gives text"

# allocs?window=1: the older window profile
get win "/debug/pprof/allocs?pid=$tpid&window=1"
[ "$(types win)" = "alloc_objects/count alloc_space/bytes[dflt] alloc_requested_space/bytes samples/count" ] ||
	fail "window types: $(types win)"
[ "$(value win alloc_space churn_allocs)" -gt 0 ] || fail "window lacks churn_allocs"
[ "$(value win alloc_space hold_100mib)" = 0 ] || fail "window has hold_100mib"
echo "ok: allocs?window=1"

for q in "allocs?pid=$tpid&seconds=1&window=1" "heap?pid=$tpid&debug=7" \
	"heap?pid=$tpid&seconds=0" "allocs?pid=$tpid&window=301" "heap?pid=$tpid&debug="; do
	c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/debug/pprof/$q")
	[ "$c" = 400 ] || fail "$q gave $c, not 400"
done
echo "ok: malformed queries -> 400"

# the index
for path in /debug/pprof/ /; do
	ct=$(curl -s -o "$work/index" -w '%{content_type}' "$URL$path")
	case $ct in text/html*) ;; *) fail "$path content type $ct" ;; esac
	grep -q "href=\"/debug/pprof/heap?pid=$tpid&amp;debug=1\"" "$work/index" || fail "$path lacks heap link"
	grep -q "href=\"/debug/pprof/allocs?pid=$tpid&amp;debug=1\"" "$work/index" || fail "$path lacks allocs link"
done
echo "ok: /debug/pprof/ index"
kill -0 "$dpid" || fail "daemon died"
echo PASS
