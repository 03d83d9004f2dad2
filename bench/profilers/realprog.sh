#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/profilers/realprog.sh - what profiling with heapscope costs real
# programs (issue 4: "at 2 MiB with the collector attached <= 1% on real
# programs"), as root.
#
#   bench/profilers/realprog.sh [--runs N] [--scale S]
#
# Programs: Debian's python3 (PYTHONMALLOC=malloc) running
# bench/programs/python_workload.py, and Debian's sqlite3 running
# bench/programs/sqlite_workload.sql on :memory:.  Each runs under
#   heapscope-off        LD_PRELOAD=libheapscope.so HEAPSCOPE_SAMPLE_RATE=0
#   heapscope-2MiB       the default period, nothing attached
#   heapscope-2MiB+daemon  `heapscope daemon` running before the program
#                        starts (it attaches to the new process, sets the
#                        probes' semaphores, every sampled event goes
#                        through BPF and the ring buffer)
# interleaved (off, 2MiB, 2MiB+daemon, off, ...), N runs each.  Reported:
# medians of the program's wall time and CPU time (user + system, from
# wait4 via /usr/bin/time), their ratios to heapscope-off, and the
# daemon's own CPU time per run (from /proc/PID/stat, on the other core).
# Writes bench/profilers/results/realprog.{md,tsv}.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=7 SCALE=1
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--scale) SCALE=$2; shift 2 ;;
	*) echo "usage: $0 [--runs N] [--scale S]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$0: run as root (the daemon loads BPF)" >&2; exit 1; }
OUT=$HERE/results TMP=$HERE/results/tmp
mkdir -p "$OUT" "$TMP"
HS=${HS_LIB:-$ROOT/build/allocator/libheapscope.so}
HSCLI=${HS_CLI:-$ROOT/build/collector/heapscope}
for f in "$HS" "$HSCLI"; do
	[ -e "$f" ] || { echo "$0: $f missing: build first (scripts/build.sh)" >&2; exit 1; }
done
PORT=${HS_BENCH_PORT:-16062}
PY=/usr/bin/python3 # Debian's, not a pyenv shim first on PATH
ROWS=$(awk -v s="$SCALE" 'BEGIN { printf "%d", 150000 * s }')
{
	echo "CREATE TEMP TABLE param(n); INSERT INTO param VALUES($ROWS);"
	cat "$ROOT/bench/programs/sqlite_workload.sql"
} > "$TMP/sqlite.sql"

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
		> "$TMP/realprog-daemon.log" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 100); do
		curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && return 0
		sleep 0.1
	done
	echo "$0: heapscope daemon did not start (see $TMP/realprog-daemon.log)" >&2
	exit 1
}
# CPU seconds (user + system) the daemon has used so far
daemon_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' \
		"/proc/$DAEMON_PID/stat"
}
# attached: the daemon lists the pid under /processes
attached() {
	curl -sf "http://127.0.0.1:$PORT/processes" | grep -q "\"pid\": *$1\b"
}

# run_prog PROG CONFIG: prints "wall cpu daemon_cpu attached"
run_prog() {
	local prog=$1 cfg=$2 rate=0 d0=0 d1=0 att=-
	case $cfg in heapscope-2MiB*) rate=2097152 ;; esac
	[ "$cfg" = heapscope-2MiB+daemon ] && { start_daemon; d0=$(daemon_cpu); }
	local cmd
	case $prog in
	python3) cmd=(env PYTHONMALLOC=malloc "$PY" "$ROOT/bench/programs/python_workload.py" "$SCALE") ;;
	sqlite3) cmd=(/usr/bin/sqlite3 :memory:) ;;
	esac
	local in=/dev/null
	[ "$prog" = sqlite3 ] && in=$TMP/sqlite.sql
	env LD_PRELOAD="$HS" HEAPSCOPE_SAMPLE_RATE=$rate /usr/bin/time \
		-f "time %e %U %S" -o "$TMP/realprog.time" "${cmd[@]}" \
		< "$in" > /dev/null 2> "$TMP/realprog.err" &
	local pid=$!
	if [ -n "$DAEMON_PID" ]; then
		# the program itself is time's child; it must be attached
		att=no
		for _ in $(seq 1 50); do
			local child
			child=$(pgrep -P $pid | head -1)
			[ -n "$child" ] && attached "$child" && { att=yes; break; }
			sleep 0.05
		done
	fi
	wait $pid
	[ -n "$DAEMON_PID" ] && { d1=$(daemon_cpu); stop_daemon; }
	awk -v d="$(awk -v a="$d0" -v b="$d1" 'BEGIN { printf "%.3f", b - a }')" \
		-v att=$att '/^time/ { printf "%s %.3f %s %s\n", $2, $3 + $4, d, att }' \
		"$TMP/realprog.time"
}

TSV=$OUT/realprog.tsv
echo -e "run\tprogram\tconfig\twall_s\tcpu_s\tdaemon_cpu_s\tattached" > "$TSV"
CONFIGS=(heapscope-off heapscope-2MiB heapscope-2MiB+daemon)
for r in $(seq 1 "$RUNS"); do
	for prog in python3 sqlite3; do
		# rotate the order each run so no config always goes first
		for k in 0 1 2; do
			cfg=${CONFIGS[$(( (k + r) % 3 ))]}
			line=$(run_prog $prog $cfg)
			echo -e "$r\t$prog\t$cfg\t${line// /\\t}" >> "$TSV"
			echo "run $r $prog $cfg: $line" >&2
		done
	done
done

/usr/bin/python3 - "$TSV" "$OUT/realprog.md" "$RUNS" "$SCALE" <<'EOF'
import csv, statistics, sys, subprocess, datetime
tsv, md, runs, scale = sys.argv[1:5]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
progs = ["python3", "sqlite3"]
cfgs = ["heapscope-off", "heapscope-2MiB", "heapscope-2MiB+daemon"]
def med(p, c, k):
    v = [float(r[k]) for r in rows if r["program"] == p and r["config"] == c]
    return statistics.median(v) if v else float("nan")
load = open("/proc/loadavg").read().split()[0]
commit = subprocess.run(["git", "-C", sys.path[0] or ".", "log", "-1", "--format=%h"],
                        capture_output=True, text=True).stdout.strip()
out = [f"# Real programs under heapscope, with and without the collector",
       "",
       f"`bench/profilers/realprog.sh --runs {runs} --scale {scale}` "
       f"({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, load average at the end {load}). "
       "Medians over the runs; configurations interleaved, order rotated each run. "
       "CPU = the program's user + system time (wait4); the daemon's CPU is its own "
       "(another core), per run.",
       "",
       "| program | config | wall s | CPU s | wall / off | CPU / off | daemon CPU s | attached |",
       "|---|---|---:|---:|---:|---:|---:|---|"]
for p in progs:
    w0, c0 = med(p, cfgs[0], "wall_s"), med(p, cfgs[0], "cpu_s")
    for c in cfgs:
        w, cp = med(p, c, "wall_s"), med(p, c, "cpu_s")
        d = med(p, c, "daemon_cpu_s") if c.endswith("daemon") else float("nan")
        att = ",".join(sorted({r["attached"] for r in rows
                               if r["program"] == p and r["config"] == c}))
        out.append(f"| {p} | {c} | {w:.3f} | {cp:.3f} | {w / w0:.3f} | {cp / c0:.3f} | "
                   + ("—" if d != d else f"{d:.3f}") + f" | {att} |")
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
