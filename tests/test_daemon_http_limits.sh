#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_daemon_http_limits.sh HEAPSCOPE LIB FLOOD - every request to the
# daemon gets an HTTP status (issue 14 item 5):
#   - 500 clients at once on 127.0.0.1 (tests/programs/http_flood.c), each
#     holding its connection until all have answered, twice: every one
#     gets a status line, 200 for at most SOFT_LIMIT = 32 of them
#     (collector/daemon/http_server.c), 503 with Retry-After for the rest; none
#     is reset or closed without a status (before: 16 served, the other
#     484 closed without a word); heapscope_http_busy_total counts the 503s;
#     the daemon serves 200 again after;
#   - 405 with "Allow: GET, HEAD" for POST, PUT, DELETE;
#   - 400 for a repeated query parameter and for an encoded NUL in the
#     path, a parameter name or a value (before: /metrics%00x -> 200).
# Exit 77 = skip (not root / no BPF / no curl), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 FLOOD=$3
N=500 SOFT=32
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF)"
command -v curl >/dev/null || skip "no curl"
[ "$(ulimit -n)" -ge $((N + 64)) ] || ulimit -n $((N + 64)) ||
	skip "cannot open $N descriptors (ulimit -n $(ulimit -n))"
work=$(mktemp -d)
dpid=""
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# Below the ephemeral range, so the flood's own sockets never hold it.
hs_start_daemon "$work/d.err" --lib "$LIB" --no-copies
base="http://127.0.0.1:$port"

# 1. the flood, twice (the second finds every place freed by the first)
busy=0
for round in 1 2; do
	out=$(timeout 120 "$FLOOD" "$port" /metrics $N 60)
	rc=$?
	echo "round $round, $N clients: $out (exit $rc)"
	[ $rc -eq 0 ] || fail "round $round: a client got no status, or a 503 without Retry-After"
	ok=$(sed -n 's/.*\b200=\([0-9]*\).*/\1/p' <<<"$out")
	no=$(sed -n 's/.*\b503=\([0-9]*\).*/\1/p' <<<"$out")
	[ -n "$ok" ] && [ -n "$no" ] || { fail "round $round: unreadable output"; continue; }
	[ "$ok" -ge 1 ] && [ "$ok" -le $SOFT ] ||
		fail "round $round: $ok served (want 1..$SOFT)"
	[ $((ok + no)) -eq $N ] || fail "round $round: $ok + $no != $N"
	busy=$((busy + no))
done
c=$(curl -s -o "$work/metrics" -w '%{http_code}' --max-time 20 "$base/metrics")
[ "$c" = 200 ] || fail "/metrics after the floods -> $c"
got=$(awk '$1 == "heapscope_http_busy_total" { print $2 }' "$work/metrics")
[ "$got" = "$busy" ] || fail "heapscope_http_busy_total $got, the clients counted $busy 503s"
echo "ok: heapscope_http_busy_total $got"

# 2. 405 with Allow
for m in POST PUT DELETE; do
	curl -s -o /dev/null -D "$work/h" -X "$m" --max-time 20 "$base/metrics"
	code=$(head -1 "$work/h" | awk '{ print $2 }')
	allow=$(tr -d '\r' <"$work/h" | sed -n 's/^Allow: //Ip')
	if [ "$code" = 405 ] && [ "$allow" = "GET, HEAD" ]; then
		echo "ok: $m -> 405, Allow: $allow"
	else
		fail "$m -> $code, Allow '$allow' (want 405, 'GET, HEAD')"
	fi
done

# 3. 400: repeated parameters, encoded NULs (path, name, value)
for q in "/debug/pprof/heap?pid=1&pid=2" "/debug/pprof/heap?pid=1&pid=1" \
	"/debug/pprof/heap?comm=a&comm=b" \
	"/debug/pprof/heap?pid=1&format=text&format=text" \
	"/debug/pprof/allocs?pid=1&seconds=1&seconds=2" \
	"/metrics?x=1&x=2" \
	"/metrics%00x" "/metrics%00" "/debug/pprof/heap%00?pid=1" \
	"/debug/pprof/heap?pid=1%00" "/debug/pprof/heap?pid%00=1" \
	"/debug/pprof/heap?comm=hold%00x" "/processes?a=%00"; do
	c=$(curl -s -o "$work/body" -w '%{http_code}' --max-time 20 "$base$q")
	if [ "$c" = 400 ]; then
		echo "ok: 400 $q ($(head -1 "$work/body"))"
	else
		fail "$q -> $c (want 400)"
	fi
done
c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$base/metrics?x=1&y=2")
[ "$c" = 200 ] || fail "distinct unknown parameters -> $c (want 200)"

kill -0 "$dpid" 2>/dev/null || fail "daemon died"
exit $failed
