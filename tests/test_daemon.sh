#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `heapscope daemon` end-to-end tests (root, BPF, HTTP).
#   test_daemon.sh MODE HEAPSCOPE LIB HOLD
# MODE:
#   before           hold_100mib runs before the daemon starts; go tool pprof
#                    -top over HTTP shows its 100 MiB within 5 sigma; pprof
#                    and folded totals agree; bad queries give 400/404
#   after            hold_100mib starts after the daemon: profiled with no
#                    per-process command
#   kill_mid_scrape  the target is killed during an allocs window: an HTTP
#                    error, the daemon lives, /metrics answers
#   container        the target runs in new PID + mount namespaces
#                    (unshare); the host's daemon reports host pid and nspid
#   exec             a preloaded shell allocates, then execs hold_100mib:
#                    the profile holds only the new image's heap
#   lost             the daemon is stopped (SIGSTOP) while a target samples
#                    fast: the ring buffer overflows; the drops are counted
#                    for that process in /metrics and the profile comments
#   sighup_rate      SIGHUP dumps atomically to --dump-dir; `heapscope rate`
#                    changes the period; record --format pprof|text; SIGTERM
#                    stops the daemon cleanly
#   sigterm_dump     SIGTERM 0-40 ms after SIGHUP, i.e. during the dump,
#                    six times: the daemon exits 0 within 5 s, and the dump
#                    directory holds only complete profiles (gzip -t, go
#                    tool pprof reads each), never a temporary file
# Sigma: the estimate of M bytes has sigma <= sqrt(T*M) (DESIGN.md section 1)
# with M counted in (r+1)-byte units; we accept 5 sigma.
# Exit 77 = skip (not root / no BPF / no go), a failure when CI=true.
set -u
MODE=$1 HEAPSCOPE=$2 LIB=$3 HOLD=$4
T=65536
TRUTH=$((100 * 1024 * 1024))
R=65536

. "$(dirname "$0")/lib.sh"
fail() {
	echo "FAIL: $*"
	echo "--- daemon log"; tail -30 "$work/daemon.err" 2>/dev/null
	exit 1
}
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
command -v go >/dev/null || skip "go tool pprof missing (apt-get install golang-go; scripts/bootstrap.sh)"
hs_need_cmd curl curl

work=$(mktemp -d)
export PPROF_TMPDIR=$work HOME=$work GOCACHE=$work/gocache
dpid="" tpids=()
cleanup() {
	for p in "${tpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

start_target() { # outfile [args...]: starts hold_100mib, sets tpid
	local out=$1; shift
	HEAPSCOPE_SAMPLE_RATE=${RATE:-$T} HEAPSCOPE_SAMPLE_SEED=7 LD_PRELOAD=$LIB \
		"$HOLD" "$@" >"$out" 2>&1 &
	tpid=$!
	tpids+=("$tpid")
	wait_ready "$out"
}
wait_ready() {
	for _ in $(seq 1 200); do
		grep -q '^ready' "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "target did not become ready: $(cat "$1")"
}
# Only the container test follows other copies of the library: elsewhere
# the daemon leaves alone whatever else runs on the host (other builds).
COPIES=--no-copies
start_daemon() { # extra args
	hs_start_daemon "$work/daemon.err" --lib "$LIB" $COPIES "$@"
	PORT=$port
}
# go tool pprof -top over HTTP; prints the inuse_space total of frames named
# hold_100mib (cum), in bytes.
pprof_total() { # pid
	go tool pprof -top -unit=B -sample_index=inuse_space \
		"$URL/debug/pprof/heap?pid=$1" >"$work/top.txt" 2>"$work/top.err" ||
		fail "go tool pprof failed: $(cat "$work/top.err")"
	awk 'NF >= 6 && $NF == "hold_100mib" { v = $4; sub(/B$/, "", v); print v; f = 1 }
	     END { if (!f) print 0 }' "$work/top.txt" | head -1
}
folded_total() { # pid
	curl -sf "$URL/debug/pprof/heap?pid=$1&format=folded" >"$work/heap.folded" ||
		fail "folded scrape failed"
	awk '/hold_100mib/ { s += $NF } END { printf "%.0f\n", s + 0 }' "$work/heap.folded"
}
check_bounds() { # got label
	awk -v got="$1" -v truth=$TRUTH -v T=$T -v r=$R -v what="$2" 'BEGIN {
		M = truth / r * (r + 1); tol = 5 * sqrt(T * M);
		d = got - truth; if (d < 0) d = -d;
		printf "%s: estimated %.0f bytes, true %.0f, |diff| %.0f, 5 sigma %.0f\n",
			what, got, truth, d, tol;
		exit (d <= tol) ? 0 : 1 }' || fail "$2 outside 5 sigma"
}
check_heap() { # pid
	local p f
	p=$(pprof_total "$1")
	cat "$work/top.txt" | head -12
	check_bounds "$p" "go tool pprof -top (hold_100mib cum)"
	f=$(folded_total "$1")
	check_bounds "$f" "folded (hold_100mib)"
	# Both formats come from the same live set: they agree to rounding
	# (one byte per stack).
	awk -v a="$p" -v b="$f" 'BEGIN { d = a - b; if (d < 0) d = -d;
		printf "pprof %.0f vs folded %.0f\n", a, b; exit (d <= 64) ? 0 : 1 }' ||
		fail "pprof and folded totals disagree"
}
http_code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }

case $MODE in
before)
	start_target "$work/t.out"
	start_daemon
	check_heap "$tpid"
	grep -q 'hold_100mib.c:[0-9]' <(go tool pprof -top -lines "$URL/debug/pprof/heap?pid=$tpid" 2>/dev/null) ||
		fail "no file:line for hold_100mib"
	c=$(http_code "$URL/debug/pprof/heap?pid=abc"); [ "$c" = 400 ] || fail "pid=abc gave $c"
	# no pid: the host profile (tests/test_host_profile.sh checks it)
	c=$(http_code "$URL/debug/pprof/heap"); [ "$c" = 200 ] || fail "no pid (host profile) gave $c"
	c=$(http_code "$URL/debug/pprof/heap?pid=$tpid&format=xml"); [ "$c" = 400 ] || fail "format=xml gave $c"
	c=$(http_code "$URL/debug/pprof/heap?pid=2147483646"); [ "$c" = 404 ] || fail "unknown pid gave $c"
	c=$(http_code "$URL/debug/pprof/heap?pid=$$"); [ "$c" = 404 ] || fail "non-heapscope pid gave $c"
	c=$(http_code -X POST -d x=1 "$URL/metrics"); [ "$c" = 405 ] || fail "POST gave $c"
	c=$(http_code "$URL/nope"); [ "$c" = 404 ] || fail "unknown endpoint gave $c"
	curl -sf "$URL/processes" | grep -q "\"pid\": $tpid" || fail "/processes lacks $tpid"
	# By comm: unique -> the same profile; ambiguous -> 409; unknown -> 404.
	curl -sf "$URL/debug/pprof/heap?comm=hold_100mib&format=folded" | grep -q hold_100mib ||
		fail "comm=hold_100mib did not find the target"
	c=$(http_code "$URL/debug/pprof/heap?comm=no_such_comm"); [ "$c" = 404 ] || fail "unknown comm gave $c"
	RATE=$T start_target "$work/t2.out"
	sleep 0.5
	c=$(http_code "$URL/debug/pprof/heap?comm=hold_100mib"); [ "$c" = 409 ] || fail "ambiguous comm gave $c"
	echo "PASS: started before the daemon"
	;;
after)
	start_daemon
	start_target "$work/t.out" churn
	sleep 0.5
	check_heap "$tpid"
	c=$(http_code "$URL/debug/pprof/allocs?pid=$tpid&seconds=1")
	[ "$c" = 200 ] || fail "allocs gave $c"
	go tool pprof -top -sample_index=alloc_space "$work/body" >"$work/allocs.txt" 2>&1 ||
		fail "allocs profile unreadable: $(cat "$work/allocs.txt")"
	grep -q churn_allocs "$work/allocs.txt" || fail "allocs window lacks churn_allocs: $(cat "$work/allocs.txt")"
	grep -q 'Type: alloc_space' "$work/allocs.txt" || fail "allocs profile type"
	echo "PASS: started after the daemon, no per-process command"
	;;
kill_mid_scrape)
	start_target "$work/t.out" churn
	start_daemon
	curl -s -o "$work/allocs.body" -w '%{http_code}' \
		"$URL/debug/pprof/allocs?pid=$tpid&seconds=5" >"$work/allocs.code" &
	cpid=$!
	sleep 1
	kill -9 "$tpid"
	wait "$cpid"
	c=$(cat "$work/allocs.code")
	echo "allocs scrape of a killed target: HTTP $c ($(cat "$work/allocs.body"))"
	case $c in 4*|5*) ;; *) fail "expected an HTTP error, got $c" ;; esac
	kill -0 "$dpid" || fail "daemon died"
	c=$(http_code "$URL/debug/pprof/heap?pid=$tpid"); [ "$c" = 404 ] || fail "dead pid gave $c"
	c=$(http_code --max-time 5 "$URL/metrics"); [ "$c" = 200 ] || fail "/metrics gave $c"
	grep -q '^heapscope_scrape_errors_total [1-9]' "$work/body" || fail "scrape errors not counted"
	grep -q '^heapscope_attached_processes' "$work/body" || fail "/metrics incomplete"
	echo "PASS: killed mid-scrape -> HTTP error; /metrics answers"
	;;
container)
	command -v unshare >/dev/null || skip "no unshare (util-linux)"
	# The "container" ships its own copy of the library (another inode):
	# the daemon must find it in the process's maps and attach to it too.
	COPIES=
	mkdir "$work/image"
	cp "$LIB" "$work/image/libheapscope.so"
	HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=7 \
		LD_PRELOAD=$work/image/libheapscope.so \
		unshare --pid --fork --mount --mount-proc "$HOLD" churn >"$work/t.out" 2>&1 &
	upid=$!
	tpids+=("$upid")
	wait_ready "$work/t.out"
	tpid=$(pgrep -P "$upid" | head -1)
	[ -n "$tpid" ] || fail "no child of unshare"
	tpids+=("$tpid")
	grep -q '^ready 1$' "$work/t.out" || fail "target is not pid 1 in its namespace: $(cat "$work/t.out")"
	start_daemon
	check_heap "$tpid"
	curl -sf "$URL/processes" >"$work/procs.json"
	grep -q "\"pid\": $tpid, \"nspid\": 1," "$work/procs.json" ||
		fail "/processes lacks host pid $tpid / nspid 1: $(cat "$work/procs.json")"
	go tool pprof -raw "$URL/debug/pprof/heap?pid=$tpid" 2>/dev/null | grep -q 'nspid:\[1\]' ||
		fail "no nspid label"
	c=$(http_code "$URL/debug/pprof/allocs?pid=$tpid&seconds=1")
	[ "$c" = 200 ] || fail "allocs gave $c"
	go tool pprof -top "$work/body" 2>/dev/null | grep -q churn_allocs ||
		fail "no events from the container's copy of the library"
	echo "PASS: process in PID+mount namespaces profiled from the host (host pid $tpid, nspid 1)"
	;;
sighup_rate)
	mkdir "$work/dumps"
	start_target "$work/t.out" churn
	start_daemon --dump-dir "$work/dumps"
	kill -HUP "$dpid"
	for _ in $(seq 1 100); do
		ls "$work/dumps"/heap-"$tpid"-*.pb.gz >/dev/null 2>&1 && break
		sleep 0.05
	done
	f=$(ls "$work/dumps"/heap-"$tpid"-*.pb.gz 2>/dev/null | head -1)
	[ -n "$f" ] || fail "no dump for $tpid after SIGHUP"
	! ls "$work/dumps" | grep -q XXXX || true
	ls "$work/dumps" | grep -vq '\.pb\.gz$' && fail "temporary files left: $(ls "$work/dumps")"
	go tool pprof -top "$f" | grep -q hold_100mib || fail "dump unreadable"
	echo "SIGHUP dump ok: $f"
	"$HEAPSCOPE" rate -p "$tpid" --wait 10 128K || fail "heapscope rate"
	sleep 0.5
	curl -sf "$URL/processes" | grep -q '"sampling_period": 131072' ||
		fail "period not seen by the daemon: $(curl -s "$URL/processes")"
	"$HEAPSCOPE" record -p "$tpid" -d 1 --format pprof -o "$work/rec.pb.gz" 2>"$work/rec.err" ||
		fail "record --format pprof: $(cat "$work/rec.err")"
	go tool pprof -top "$work/rec.pb.gz" | grep -q hold_100mib || fail "record pprof unreadable"
	"$HEAPSCOPE" record -p "$tpid" -d 1 --format text 2>/dev/null | grep -q '^Total:' ||
		fail "record --format text"
	for s in record daemon rate; do
		"$HEAPSCOPE" $s --help | grep -q Usage || fail "$s --help"
	done
	kill -TERM "$dpid"
	for _ in $(seq 1 100); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$dpid" 2>/dev/null && fail "daemon ignored SIGTERM"
	wait "$dpid"; rc=$?; dpid=""
	[ $rc -eq 0 ] || fail "daemon exited $rc on SIGTERM"
	echo "PASS: SIGHUP dump, rate change, record formats, clean SIGTERM"
	;;
sigterm_dump)
	mkdir "$work/dumps"
	start_target "$work/t.out" churn
	for i in 0 1 2 3 4 5; do
		start_daemon --dump-dir "$work/dumps"
		kill -HUP "$dpid"
		sleep "0.0$((i * 8 / 10))$((i * 8 % 10))"
		kill -TERM "$dpid"
		for _ in $(seq 1 100); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.05; done
		kill -0 "$dpid" 2>/dev/null && fail "daemon still running 5 s after SIGTERM during a dump"
		wait "$dpid"; rc=$?; dpid=""
		[ $rc -eq 0 ] || fail "daemon exited $rc on SIGTERM during a dump"
		for f in "$work/dumps"/*; do
			[ -e "$f" ] || continue
			case $f in *.pb.gz) ;; *) fail "temporary or stray file left: $f" ;; esac
			gzip -t "$f" || fail "truncated dump $f"
			go tool pprof -top "$f" >/dev/null 2>&1 || fail "unreadable dump $f"
		done
		echo "round $i: SIGTERM $((i * 8)) ms after SIGHUP: exit 0, $(ls "$work/dumps" | wc -l) complete dump(s)"
		rm -f "$work/dumps"/*
	done
	echo "PASS: SIGTERM during a SIGHUP dump never leaves a partial profile"
	;;
exec)
	start_daemon
	HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=7 LD_PRELOAD=$LIB \
		bash -c 'x=$(seq 1 200000); exec "$0"' "$HOLD" >"$work/t.out" 2>&1 &
	tpid=$!
	tpids+=("$tpid")
	wait_ready "$work/t.out"
	sleep 0.3
	check_heap "$tpid"
	grep -v 'hold_100mib\|_IO_file_doallocate' "$work/heap.folded" | head -5
	if grep -q 'bash\|xmalloc' "$work/heap.folded"; then
		fail "the shell's heap survived the exec"
	fi
	echo "PASS: exec starts a fresh profile"
	;;
lost)
	start_daemon
	RATE=1024 start_target "$work/t.out" churn 64
	sleep 0.5
	# Stop the consumer until the ring buffer overflows (a loaded host
	# may need more than one round).
	for _round in 1 2 3 4 5; do
		kill -STOP "$dpid"
		sleep 3
		kill -CONT "$dpid"
		sleep 1.5 # the main thread refreshes loss counters once a second
		# /metrics must answer promptly while the backlog drains.
		curl -sf --max-time 5 "$URL/metrics" >"$work/metrics" ||
			fail "/metrics did not answer within 5 s under load"
		grep -q '^heapscope_lost_events_total{reason="ringbuf"} [1-9]' "$work/metrics" && break
	done
	grep "heapscope_process_lost_events_total{pid=\"$tpid\"" "$work/metrics"
	grep -q "heapscope_process_lost_events_total{pid=\"$tpid\",comm=\"hold_100mib\",reason=\"ringbuf\"} [1-9]" \
		"$work/metrics" || fail "no per-process ring-buffer loss counted"
	grep -q '^heapscope_lost_events_total{reason="ringbuf"} [1-9]' "$work/metrics" ||
		fail "no global ring-buffer loss counted"
	go tool pprof -raw "$URL/debug/pprof/heap?pid=$tpid" 2>/dev/null |
		grep -E 'lost events: [1-9][0-9]* ring buffer \(this process' ||
		fail "profile comments lack the loss"
	echo "PASS: ring-buffer losses counted per process (metrics, profile comments)"
	;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac
exit 0
