#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_daemon_rss.sh HEAPSCOPE LIB RSS_TARGET - the daemon's RSS view
# (root, BPF): /debug/heapscope/rss?pid=N of a process holding a known
# heap (tests/programs/rss_target.c) gives the table `heapscope rss`
# gives (heap_in_use exact: the target is idle; the parts sum to the
# kernel's RSS within 5 %), /metrics carries it as
# heapscope_process_rss_part_bytes{pid,comm,part} and
# heapscope_process_rss_bytes, and the access rules of the other per-pid
# endpoints hold: 400 malformed, 404 no such process or not a heapscope
# process, 403 to a non-root unix-socket peer for root's process.
# Exit 77 = skip (not root / no BPF / no curl), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF)"
command -v curl >/dev/null || skip "no curl"
command -v setpriv >/dev/null || skip "no setpriv"
work=$(mktemp -d)
chmod 755 "$work"
pids=()
dpid=""
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

SOCK=$work/http.sock
hs_start_daemon "$work/d.err" --lib "$LIB" --no-copies --listen "unix:$SOCK"
B=http://127.0.0.1:$port

mkfifo "$work/in"
HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=1 "$TARGET" <"$work/in" >"$work/out" &
tpid=$!
pids+=("$tpid")
exec 3>"$work/in"
for _ in $(seq 100); do grep -q '^ready1' "$work/out" && break; sleep 0.1; done
echo >&3
for _ in $(seq 300); do grep -q '^ready2' "$work/out" && break; sleep 0.1; done
grep -q '^ready2' "$work/out" || fail "target never ready"

code() { curl -s -o "$work/body" -w '%{http_code}' --max-time 30 "$@"; }
c=$(code "$B/debug/heapscope/rss?pid=$tpid")
[ "$c" = 200 ] || fail "rss?pid=$tpid -> $c: $(cat "$work/body")"
cp "$work/body" "$work/http.json"
"$HEAPSCOPE" rss -p "$tpid" >"$work/cli.json" || fail "heapscope rss failed"
c=$(code "$B/metrics")
[ "$c" = 200 ] || fail "/metrics -> $c"
cp "$work/body" "$work/metrics"
c=$(code "$B/metrics?pid=$tpid")
[ "$c" = 200 ] || fail "/metrics?pid -> $c"
cp "$work/body" "$work/metrics1"
python3 - "$work/http.json" "$work/cli.json" "$work/metrics" "$work/metrics1" "$tpid" <<'PY' || exit 1
import json, re, sys
h = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
pid = int(sys.argv[5])
assert h["pid"] == pid
hp, cp = h["parts"], c["parts"]
print("http:", hp)
assert sorted(hp) == sorted(cp)
# the target is idle: the allocator's counters do not move
assert hp["heap_in_use"] == cp["heap_in_use"], (hp, cp)
assert hp["heap_in_use"] > 50_000_000
s = sum(hp.values())
assert abs(s - h["rss_bytes"]) <= 0.05 * h["rss_bytes"], (s, h["rss_bytes"])
for name in (sys.argv[3], sys.argv[4]):
    text = open(name).read()
    got = {m.group(1): int(m.group(2)) for m in re.finditer(
        r'^heapscope_process_rss_part_bytes\{pid="%d",comm="rss_target",part="(\w+)"\} (\d+)$' % pid,
        text, re.M)}
    assert sorted(got) == sorted(hp), (name, got)
    assert got["heap_in_use"] == hp["heap_in_use"], (got, hp)
    m = re.search(r'^heapscope_process_rss_bytes\{pid="%d",comm="rss_target"\} (\d+)$' % pid, text, re.M)
    assert m and abs(int(m.group(1)) - sum(got.values())) <= 0.05 * int(m.group(1))
    assert text.count("# TYPE heapscope_process_rss_part_bytes gauge") == 1
print("metrics: ok")
PY

# access rules and errors
true &
gone=$!
wait "$gone"
sleep 60 &
plain=$!
pids+=("$plain")
for q in "" "?pid=" "?pid=abc" "?pid=-1" "?pid=0" "?pid=99999999999999"; do
	c=$(code "$B/debug/heapscope/rss$q")
	[ "$c" = 400 ] || fail "rss$q -> $c (want 400)"
done
c=$(code "$B/debug/heapscope/rss?pid=$gone")
[ "$c" = 404 ] || fail "rss of a vanished pid -> $c (want 404)"
c=$(code "$B/debug/heapscope/rss?pid=$plain")
[ "$c" = 404 ] || fail "rss of a process without the library -> $c (want 404): $(cat "$work/body")"
grep -q "does not use the heapscope library" "$work/body" || fail "404 body: $(cat "$work/body")"
c=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -o /dev/null \
	-w '%{http_code}' --max-time 30 --unix-socket "$SOCK" \
	"http://localhost/debug/heapscope/rss?pid=$tpid")
[ "$c" = 403 ] || fail "nobody's rss of root's process -> $c (want 403)"
c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 --unix-socket "$SOCK" \
	"http://localhost/debug/heapscope/rss?pid=$tpid")
[ "$c" = 200 ] || fail "root over the socket -> $c"
# nobody's /metrics: no RSS series of root's process
setpriv --reuid=65534 --regid=65534 --clear-groups curl -s --max-time 30 \
	--unix-socket "$SOCK" "http://localhost/metrics" >"$work/nobody.metrics" ||
	fail "nobody's /metrics failed"
grep -q '^# TYPE heapscope_process_rss_part_bytes gauge' "$work/nobody.metrics" ||
	fail "nobody's /metrics lacks the RSS families"
grep -q "^heapscope_process_rss.*pid=\"$tpid\"" "$work/nobody.metrics" &&
	fail "nobody's /metrics has root's process's RSS"
exec 3>&-
echo PASS
