#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collector daemon cost (root): CPU and RSS of `heapscope daemon` while it
# profiles an allocation-heavy process (hold_100mib churn N: N 64 KiB
# malloc/free pairs per millisecond), at the default sampling period and
# at period 1 with rising N, until the ring buffer loses events.
#   bench/collector_daemon.sh BUILD_DIR [SECONDS]
set -u
B=${1:?build dir}
SECS=${2:-5}
HS=$B/collector/heapscope LIB=$B/allocator/libheapscope.so
HOLD=$B/tests/programs/hold_100mib
PORT=$((10000 + RANDOM % 20000))
URL=http://127.0.0.1:$PORT
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }

"$HS" daemon --lib "$LIB" --listen 127.0.0.1:$PORT 2>/tmp/hs_bench_daemon.err &
D=$!
trap 'kill $D 2>/dev/null; kill $T 2>/dev/null' EXIT
sleep 1
tick=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat; }
rss_kb() { awk '/^VmRSS/ { print $2 }' /proc/"$1"/status; }
metric() { curl -s "$URL/metrics" | awk -v k="$1" 'index($0, k) == 1 { s += $NF } END { print s + 0 }'; }

run() { # label rate churn_per_ms
	local label=$1 rate=$2 n=$3 c0 c1 e0 e1 l0 l1
	if [ "$rate" = default ]; then
		LD_PRELOAD=$LIB "$HOLD" churn "$n" >/dev/null &
	else
		HEAPSCOPE_SAMPLE_RATE=$rate LD_PRELOAD=$LIB "$HOLD" churn "$n" >/dev/null &
	fi
	T=$!
	sleep 1.5
	c0=$(cpu_ticks $D); e0=$(metric 'heapscope_events_total{type="alloc"}')
	l0=$(metric 'heapscope_lost_events_total{reason="ringbuf"}')
	sleep "$SECS"
	c1=$(cpu_ticks $D); e1=$(metric 'heapscope_events_total{type="alloc"}')
	sleep 1.1 # loss counters refresh once a second
	l1=$(metric 'heapscope_lost_events_total{reason="ringbuf"}')
	awk -v l="$label" -v c=$((c1 - c0)) -v t="$tick" -v s="$SECS" \
		-v e=$((e1 - e0)) -v lost=$((l1 - l0)) -v rss="$(rss_kb $D)" 'BEGIN {
		printf "%-28s daemon CPU %5.1f%%  RSS %6d KiB  sampled allocs %8.0f/s  lost %d\n",
			l, 100 * c / t / s, rss, e / s, lost }'
	kill $T; wait $T 2>/dev/null
}

echo "# heapscope daemon cost, ${SECS} s per point ($(nproc) CPUs)"
run "default period, churn 16/ms" default 16
run "default period, churn 64/ms" default 64
for n in 1 4 16 64; do
	run "period 1, churn $n/ms" 1 "$n"
done
