#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_daemon_comm.sh HEAPSCOPE LIB TARGET - the daemon's RSS and leak
# views take ?comm=NAME as the profile endpoints do (issue 18 gap 4):
# rss?comm=NAME and leaks?comm=NAME answer for the one followed process
# with that comm (its pid in the JSON), 404 when none has it, 409 when
# several do, 400 for a comm of 16 bytes or more.  TARGET
# (tests/programs/rss_untouched.c, under LIB) runs as one copy named
# hs_comm_one and two named hs_comm_two.  Root and BPF; exit 77 = skip,
# a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 TARGET=$3
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF)"
command -v curl >/dev/null || skip "no curl"
work=$(mktemp -d)
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

hs_start_daemon "$work/d.err" --lib "$LIB" --no-copies
B=http://127.0.0.1:$port
code() { curl -s -o "$work/body" -w '%{http_code}' --max-time 30 "$@"; }

cp "$TARGET" "$work/hs_comm_one"
cp "$TARGET" "$work/hs_comm_two"
# start NAME: a copy of the target under LIB, held by a fifo; sets tpid
n=0
start() {
	n=$((n + 1))
	mkfifo "$work/in$n"
	LD_PRELOAD=$LIB "$work/$1" <"$work/in$n" >"$work/out$n" &
	tpid=$!
	pids+=("$tpid")
	eval "exec $((n + 2))>\"\$work/in\$n\""
	for _ in $(seq 300); do
		grep -q '^ready' "$work/out$n" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "$1 never ready"
}
start hs_comm_one
one=$tpid
start hs_comm_two
start hs_comm_two
# followed from the first request that names them
for p in "${pids[@]}"; do
	c=$(code "$B/debug/heapscope/rss?pid=$p")
	[ "$c" = 200 ] || fail "rss?pid=$p -> $c: $(cat "$work/body")"
done
for ep in rss leaks; do
	c=$(code "$B/debug/heapscope/$ep?comm=hs_comm_one")
	[ "$c" = 200 ] || fail "$ep?comm=hs_comm_one -> $c: $(cat "$work/body")"
	python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); assert t["pid"] == int(sys.argv[2]), t["pid"]' \
		"$work/body" "$one" || fail "$ep?comm=hs_comm_one is not pid $one"
	echo "ok: $ep?comm=hs_comm_one -> pid $one"
	c=$(code "$B/debug/heapscope/$ep?comm=hs_comm_two")
	[ "$c" = 409 ] || fail "$ep?comm=hs_comm_two (two of them) -> $c (want 409)"
	grep -q "several processes with that comm" "$work/body" || fail "409 body: $(cat "$work/body")"
	c=$(code "$B/debug/heapscope/$ep?comm=hs_comm_none")
	[ "$c" = 404 ] || fail "$ep?comm=hs_comm_none -> $c (want 404)"
	c=$(code "$B/debug/heapscope/$ep?comm=0123456789abcdef")
	[ "$c" = 400 ] || fail "$ep with a 16-byte comm -> $c (want 400)"
	grep -q "comm=NAME" "$work/body" || fail "400 body: $(cat "$work/body")"
	echo "ok: $ep?comm= 409 for two, 404 for none, 400 for too long"
done
echo PASS
