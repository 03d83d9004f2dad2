#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_under_daemon.sh HEAPSCOPE LIB CMD [ARG...] - runs CMD while a
# `heapscope daemon --lib LIB` runs system-wide, the normal state of a
# fleet host (issue 14 item 7): CMD must pass with the collector attached.
# The daemon attaches its uprobes to LIB's inode before it prints
# "listening", so every process that maps LIB afterwards has the probes
# live (their semaphores set) from its first allocation.  CMD gets
# HS_EXPECT_COLLECTOR=1 (tests/test_sampled.c asserts it).  --no-copies:
# other copies of the library on this host (other builds, other runs)
# are left alone.  Exit 77 = skip (not root / no BPF), a failure when
# CI=true; otherwise CMD's status, or 1 if the daemon died meanwhile.
set -u
HEAPSCOPE=$1 LIB=$2
shift 2

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"

work=$(mktemp -d)
dpid=""
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

started=0
for _ in 1 2 3 4 5; do # a port in use: another one
	port=$((20000 + RANDOM % 20000))
	"$HEAPSCOPE" daemon --lib "$LIB" --no-copies --listen "127.0.0.1:$port" \
		2>"$work/daemon.err" &
	dpid=$!
	for _ in $(seq 1 200); do
		grep -q 'listening on' "$work/daemon.err" && { started=1; break; }
		kill -0 "$dpid" 2>/dev/null || break
		sleep 0.05
	done
	[ $started = 1 ] && break
	wait "$dpid" 2>/dev/null
	dpid=""
	grep -q "BPF not available\|Operation not permitted" "$work/daemon.err" &&
		skip "$(head -1 "$work/daemon.err")"
done
[ $started = 1 ] || { echo "FAIL: the daemon did not start:"; cat "$work/daemon.err"; exit 1; }
echo "daemon: $(grep 'listening on' "$work/daemon.err")"

HS_EXPECT_COLLECTOR=1 "$@"
rc=$?
kill -0 "$dpid" 2>/dev/null || { echo "FAIL: the daemon died:"; cat "$work/daemon.err"; rc=1; }
[ $rc = 0 ] && echo "ok: passed with the daemon attached: $*"
exit $rc
