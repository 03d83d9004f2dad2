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

. "$(dirname "$0")/lib.sh"
hs_need_bpf

work=$(mktemp -d)
dpid=""
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

hs_start_daemon "$work/daemon.err" --lib "$LIB" --no-copies
echo "daemon: $(grep 'listening on' "$work/daemon.err")"

HS_EXPECT_COLLECTOR=1 "$@"
rc=$?
kill -0 "$dpid" 2>/dev/null || { echo "FAIL: the daemon died:"; cat "$work/daemon.err"; rc=1; }
[ $rc = 0 ] && echo "ok: passed with the daemon attached: $*"
exit $rc
