#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_daemon_http.sh HEAPSCOPE LIB - the daemon's HTTP server facing
# hostile clients (issue 7 item 8): a non-loopback --listen is refused
# without --allow-remote, the default address is loopback, malformed
# queries get 4xx, an oversized request line or header gets 4xx (or the
# connection closed) without hurting the daemon, an idle connection is
# closed (IDLE_TIMEOUT_S = 30 s in collector/daemon/http.c), and the daemon
# still answers afterwards.
# Exit 77 = skip (not root / no BPF / no curl), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2
skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF)"
command -v curl >/dev/null || skip "no curl"
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

# 1. non-loopback without --allow-remote
if timeout 10 "$HEAPSCOPE" daemon --lib "$LIB" --listen 0.0.0.0:0 \
	2>"$work/remote.err"; then
	fail "0.0.0.0 accepted without --allow-remote"
else
	echo "ok: non-loopback refused: $(head -1 "$work/remote.err")"
fi

port=$((20000 + $$ % 20000))
start_daemon() {
	"$HEAPSCOPE" daemon --lib "$LIB" "$@" >"$work/d.out" 2>"$work/d.err" &
	dpid=$!
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "http://127.0.0.1:${port_used}/metrics" && return 0
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "BPF not available" "$work/d.err" && skip "$(head -1 "$work/d.err")"
	fail "daemon did not start: $(cat "$work/d.err")"
	return 1
}

# 2. default address: loopback (only when 6060 is free here)
if ! ss -ltn | grep -q ':6060 '; then
	port_used=6060
	if start_daemon; then
		if ss -ltn | awk '{print $4}' | grep ':6060$' | grep -vq '^127\.0\.0\.1:'; then
			fail "default listen not loopback: $(ss -ltn | grep :6060)"
		else
			echo "ok: default listen $(ss -ltn | awk '{print $4}' | grep ':6060$')"
		fi
		kill "$dpid"; wait "$dpid" 2>/dev/null; dpid=""
	fi
else
	echo "note: port 6060 busy, default address not checked"
fi

port_used=$port
start_daemon --listen "127.0.0.1:$port" || exit 1
base="http://127.0.0.1:$port"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$@"; }

# 3. malformed queries -> 4xx
for q in "/debug/pprof/allocs?window=1" "/debug/pprof/heap?pid=abc" \
	"/debug/pprof/heap?pid=-1" "/debug/pprof/heap?pid=99999999999999999999" \
	"/debug/pprof/heap?pid=1&format=bogus" \
	"/debug/pprof/allocs?pid=1&seconds=-5" \
	"/debug/pprof/allocs?pid=1&seconds=1e9" \
	"/debug/pprof/allocs?pid=1&seconds=99999999" \
	"/debug/pprof/heap?pid=%00" "/nope" "/../../etc/passwd" \
	"/debug/pprof/heap?pid=1&pid=2&pid=3"; do
	c=$(code "$base$q")
	case $c in
	4??) echo "ok: $c $q" ;;
	*) fail "$q -> $c (want 4xx)" ;;
	esac
done
c=$(code -X POST --data 'x=1' "$base/debug/pprof/heap?pid=1")
case $c in 4??) echo "ok: POST -> $c" ;; *) fail "POST -> $c" ;; esac

# 4. oversized request line and header
long=$(head -c 100000 /dev/zero | tr '\0' a)
c=$(code "$base/debug/pprof/heap?pid=1&x=$long")
case $c in 4??|000) echo "ok: 100 KB URL -> $c" ;; *) fail "100 KB URL -> $c" ;; esac
c=$(code -H "X-Big: $long" "$base/metrics")
case $c in 4??|000) echo "ok: 100 KB header -> $c" ;; *) fail "100 KB header -> $c" ;; esac

# 5. an idle connection is closed by the server
t0=$(date +%s)
exec 3<>"/dev/tcp/127.0.0.1/$port"
timeout 60 cat <&3 >/dev/null
exec 3<&-
idle=$(( $(date +%s) - t0 ))
if [ "$idle" -ge 59 ]; then
	fail "idle connection still open after $idle s"
else
	echo "ok: idle connection closed by the server after $idle s"
fi

# 6. still serving
c=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 60 "$base/metrics")
case $c in
200*) echo "ok: /metrics after the abuse: $c s" ;;
*) fail "/metrics after the abuse -> $c"; tail -5 "$work/d.err" ;;
esac
kill -0 "$dpid" 2>/dev/null || fail "daemon died"
exit $failed
