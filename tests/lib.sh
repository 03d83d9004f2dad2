# SPDX-License-Identifier: MIT
# tests/lib.sh - what the shell tests share.  Source it, after `set -u`:
#     . "$(dirname "$0")/lib.sh"
# It defines functions only (and no trap: each test keeps its own cleanup).
#
#   skip MSG...           one line "SKIP: MSG"; exit 77 (ctest's skip), or
#                         exit 1 when CI=true (a skip is a failure in CI)
#   hs_need_bpf           skip unless root and the kernel has BTF
#   hs_need_cmd CMD WHAT  skip unless CMD is on PATH ("WHAT missing")
#   hs_start_daemon ERR ARGS...
#                         start `$HEAPSCOPE daemon ARGS --listen
#                         127.0.0.1:PORT` in the background, its stderr in
#                         ERR, on a random port from 10000-29999 (below the
#                         ephemeral range, so client sockets never hold it),
#                         retried on another port (5 tries) when it is taken.
#                         Returns when the daemon logs "listening on", with
#                         dpid (its pid), port and URL (http://127.0.0.1:PORT)
#                         set.  Skips when the daemon says BPF is not
#                         available; otherwise a daemon that exits is a
#                         failure (ERR printed, exit 1).

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}

hs_need_bpf() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
}

hs_need_cmd() {
	command -v "$1" >/dev/null || skip "$2 missing (scripts/bootstrap.sh)"
}

hs_start_daemon() {
	local err=$1 _try _i
	shift
	dpid=""
	for _try in 1 2 3 4 5; do
		port=$((10000 + RANDOM % 20000))
		# emptied here, not by the background job's redirection: that may
		# run after the loop below has read the last try's "listening on"
		: >"$err"
		"$HEAPSCOPE" daemon "$@" --listen "127.0.0.1:$port" 2>"$err" &
		dpid=$!
		for _i in $(seq 1 200); do
			if grep -q 'listening on' "$err"; then
				URL=http://127.0.0.1:$port
				return 0
			fi
			kill -0 "$dpid" 2>/dev/null || break
			sleep 0.05
		done
		kill "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		dpid=""
		grep -q 'BPF not available' "$err" && skip "$(head -1 "$err")"
		grep -q 'Address already in use' "$err" || break
	done
	echo "FAIL: the daemon did not start: $(head -c 2000 "$err")"
	exit 1
}
