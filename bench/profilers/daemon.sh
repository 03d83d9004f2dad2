# SPDX-License-Identifier: MIT
# bench/profilers/daemon.sh - sourced by run.sh and realprog.sh: a
# `heapscope daemon --lib $HS --no-copies` on 127.0.0.1:$PORT ($HSCLI is
# the collector), stopped on exit.
#
#   start_daemon LOG   start it, log to LOG; returns 0 once it answers
#                      /metrics, 1 (with a message) if it never does
#   stop_daemon        stop it (no-op when none runs)
DAEMON_PID=
stop_daemon() {
	[ -n "$DAEMON_PID" ] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
trap stop_daemon EXIT
start_daemon() {
	"$HSCLI" daemon --lib "$HS" --no-copies --listen 127.0.0.1:$PORT \
		> "$1" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 100); do
		curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && return 0
		sleep 0.1
	done
	echo "heapscope daemon did not start (see $1)" >&2
	return 1
}
