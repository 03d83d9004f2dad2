#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# heapscope's benchmark suite, in one command: installs the peer allocators
# (bench/bootstrap.sh), builds libheapscope.so and the workloads, runs every
# workload under every allocator (interleaved), measures the fast path and
# the memory given back, and writes bench/results/<date>-allocators.md and
# its PNG plots. It reports; it never fails on a timing.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/run.sh [--threads N] [--runs N] [--quick] [--allocators LIST]
                    [--workloads LIST] [--no-bootstrap] [--tag NAME]

  --threads N       thread counts 1 and N (default: nproc)
  --runs N          runs of each workload under each allocator (default 5;
                    --quick: 2)
  --quick           0.15-size inputs and 2 runs (about 3-5 minutes)
  --allocators LIST comma-separated subset of:
                    glibc,jemalloc,tcmalloc,mimalloc,heapscope-off,heapscope
  --workloads LIST  comma-separated subset of the workload names
  --no-bootstrap    do not check/install the Debian packages
  --tag NAME        results file name suffix (default: allocators, or
                    allocators-quick with --quick)
  --timeout S       a run taking longer is killed and recorded as a timeout,
                    and that cell is not run again (default 20; --quick: 10)

examples:
  sudo bench/run.sh                 # full suite, ~15-25 min on 2 cores
  sudo bench/run.sh --quick         # smoke run, ~3 min
  bench/run.sh --runs 3 --workloads small_churn,larson_server
EOF
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/bench
THREADS=$(nproc)
RUNS=
RUN_TIMEOUT=
QUICK=0
ONLY_ALLOC=
ONLY_WL=
BOOTSTRAP=1
TAG=

while [ $# -gt 0 ]; do
	case $1 in
	--threads) THREADS=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--quick) QUICK=1; shift ;;
	--allocators) ONLY_ALLOC=$2; shift 2 ;;
	--workloads) ONLY_WL=$2; shift 2 ;;
	--no-bootstrap) BOOTSTRAP=0; shift ;;
	--tag) TAG=$2; shift 2 ;;
	--timeout) RUN_TIMEOUT=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done

if [ "$QUICK" = 1 ]; then
	SCALE=0.15; RUNS=${RUNS:-2}; FP_N=10000000; MEMRET_MIB=256; RUN_TIMEOUT=${RUN_TIMEOUT:-10}
	TAG=${TAG:-allocators-quick}
else
	SCALE=1.0; RUNS=${RUNS:-5}; FP_N=50000000; MEMRET_MIB=1024; RUN_TIMEOUT=${RUN_TIMEOUT:-20}
	TAG=${TAG:-allocators}
fi
THREAD_LIST="1"
[ "$THREADS" -gt 1 ] && THREAD_LIST="1 $THREADS"

DATE=$(date +%F)
OUT=$BENCH/results
TMP=$OUT/tmp/$TAG
rm -rf "$TMP"
mkdir -p "$TMP"
log() { bench_log "$@"; }
. "$BENCH/lib.sh"

# ---- phase 1: packages -------------------------------------------------------
if [ "$BOOTSTRAP" = 1 ]; then
	bash "$BENCH/bootstrap.sh"
fi

# ---- phase 2: build ------------------------------------------------------------
bench_build_heapscope
bench_build_suite

# ---- phase 3: allocators and workloads ---------------------------------------
bench_allocators "$ONLY_ALLOC"

# The sqlite3 input: the row count goes in a parameter table.
SQL_ROWS=$(awk -v s="$SCALE" 'BEGIN { printf "%d", 150000 * s }')
{
	echo "CREATE TEMP TABLE param(n); INSERT INTO param VALUES($SQL_ROWS);"
	cat "$BENCH/programs/sqlite_workload.sql"
} >"$TMP/sqlite.sql"

# name|scales with threads (1), one process only (0) or a fixed thread
# count, run once, under the largest of the list (2)|stdin|command
WORKLOADS=(
	"small_churn|1|-|$B/small_churn -s $SCALE -t"
	"larson_server|1|-|$B/larson_server -s $SCALE -t"
	"producer_consumer|1|-|$B/producer_consumer -s $SCALE -t"
	"remote_free|2|-|$B/remote_free -s $SCALE"
	"false_sharing|1|-|$B/false_sharing -s $SCALE -t"
	"mixed_sizes|1|-|$B/mixed_sizes -s $SCALE -t"
	"realloc_growth|1|-|$B/realloc_growth -s $SCALE -t"
	"large_blocks|1|-|$B/large_blocks -s $SCALE -t"
	"thread_churn|1|-|$B/thread_churn -s $SCALE -t"
	"sqlite3|0|$TMP/sqlite.sql|/usr/bin/sqlite3 :memory:"
	"python3|0|-|env PYTHONMALLOC=malloc $PY $BENCH/programs/python_workload.py $SCALE"
	"redis|0|-|REDIS"
)
if [ -n "$ONLY_WL" ]; then
	sel=()
	for w in "${WORKLOADS[@]}"; do
		[[ ",$ONLY_WL," == *",${w%%|*},"* ]] && sel+=("$w")
	done
	WORKLOADS=("${sel[@]}")
fi

# ---- phase 4: metadata -------------------------------------------------------
{
	echo "date=$DATE"
	echo "started=$(date '+%F %T %Z')"
	echo "tag=$TAG"
	echo "quick=$QUICK"
	echo "runs=$RUNS"
	echo "threads=$THREAD_LIST"
	echo "scale=$SCALE"
	echo "timeout=$RUN_TIMEOUT"
	bench_meta_common sqlite3 python3 redis-tools
} >"$TMP/meta.txt"
bench_load_start
run_one() { bench_run_one "$@"; }

# run_redis ALLOC_OPTS SCALE: redis-server under the allocator, redis-benchmark
# (not preloaded) as the client on 127.0.0.1. Debian's redis links
# libjemalloc.so.2 dynamically but calls plain malloc/free/realloc, so a
# preload interposes; for "glibc" the shim routes them to glibc (without it
# the NEEDED jemalloc would serve them). Wall time is the client's run; peak
# RSS is the server's. The server binary is redis-tools' redis-check-rdb,
# the same program, started under the name redis-server (no system service).
REDIS_PORT=16379
run_redis() {
	local opts=$1 n res wall status
	n=$(awk -v s="$2" 'BEGIN { printf "%d", 100000 * s }')
	opts=${opts/-u LD_PRELOAD/-e LD_PRELOAD=$B/libglibc_shim.so}
	# shellcheck disable=SC2086
	"$RUNNER" $opts -o "$TMP/redis.log" -t 300 -- bash -c "exec -a redis-server \
		/usr/bin/redis-check-rdb --port $REDIS_PORT --bind 127.0.0.1 --save '' \
		--appendonly no" >"$TMP/redis.res" &
	local srv=$!
	for _ in $(seq 50); do
		redis-cli -p $REDIS_PORT ping >/dev/null 2>&1 && break
		sleep 0.1
	done
	res=$("$RUNNER" -u LD_PRELOAD -t "$RUN_TIMEOUT" -- redis-benchmark -h 127.0.0.1 -p $REDIS_PORT \
		-q -n "$n" -P 16 -r 100000 -d 128 -t set,get,incr,lpush,lpop,sadd,hset,spop)
	redis-cli -p $REDIS_PORT shutdown nosave >/dev/null 2>&1 || true
	wait "$srv" || true
	wall=$(cut -f1 <<<"$res")
	status=$(cut -f3 <<<"$res")
	[ "$status" = ok ] && status=$(cut -f3 "$TMP/redis.res")
	[ "$status" = ok ] && ! grep -q 'ready to exit' "$TMP/redis.log" && status=server-died
	printf '%s\t%s\t%s\n' "$wall" "$(cut -f2 "$TMP/redis.res")" "$status"
}

# ---- phase 5: the workloads, interleaved --------------------------------------
RAW=$TMP/raw.tsv
printf 'workload\tthreads\tallocator\trun\twall_s\tmaxrss_kib\tstatus\n' >"$RAW"
n_alloc=${#ALLOCS[@]}
declare -A TIMED_OUT=()
log "runs=$RUNS threads=($THREAD_LIST) scale=$SCALE allocators=$n_alloc workloads=${#WORKLOADS[@]}"
for run in $(seq 1 "$RUNS"); do
	for T in $THREAD_LIST; do
		for w in "${WORKLOADS[@]}"; do
			IFS='|' read -r wname scal win wcmd <<<"$w"
			[ "$scal" = 0 ] && [ "$T" != 1 ] && continue
			[ "$scal" = 2 ] && [ "$T" != "${THREAD_LIST##* }" ] && continue
			args=$wcmd
			[ "$scal" = 1 ] && args="$wcmd $T"
			# Rotate the order each run so no allocator always goes first.
			for i in $(seq 0 $((n_alloc - 1))); do
				a=${ALLOCS[$(((i + run) % n_alloc))]}
				aname=${a%%|*}
				aopts=${a#*|}
				# shellcheck disable=SC2086
				# A cell that timed out once is not run again: record it as such.
				if [ -n "${TIMED_OUT["$wname $T $aname"]:-}" ]; then
					printf '%s\t%s\t%s\t%s\tnan\t0\ttimeout-skipped\n' "$wname" "$T" "$aname" "$run" >>"$RAW"
					continue
				fi
				if [ "$wcmd" = REDIS ]; then
					res=$(run_redis "$aopts" "$SCALE")
				else
					res=$(run_one "$aopts" "$win" - "$RUN_TIMEOUT" $args)
				fi
				[[ $res == *timeout* ]] && TIMED_OUT["$wname $T $aname"]=1
				printf '%s\t%s\t%s\t%s\t%s\n' "$wname" "$T" "$aname" "$run" "$res" >>"$RAW"
				log "run $run/$RUNS T=$T $wname $aname: $res"
			done
		done
	done
done

# ---- phase 6: fast path --------------------------------------------------------
FP=$TMP/fastpath.tsv
printf 'allocator\trun\tns_per_pair\tstatus\n' >"$FP"
for run in $(seq 1 "$RUNS"); do
	for a in "${ALLOCS[@]}"; do
		res=$(run_one "${a#*|}" - "$TMP/fp.out" 60 "$B/fastpath" "$FP_N")
		printf '%s\t%s\t%s\t%s\n' "${a%%|*}" "$run" "$(cat "$TMP/fp.out" 2>/dev/null || echo nan)" \
			"$(cut -f3 <<<"$res")" >>"$FP"
	done
done
log "fast path timed: done"

# Instructions per pair: Ir(2N) - Ir(N), over N. callgrind counts exactly.
CG=$TMP/instructions.tsv
printf 'allocator\ttool\tn\tinstructions\n' >"$CG"
PERF_OK=0
perf stat -x, -e instructions:u true >/dev/null 2>"$TMP/perf-probe.txt" &&
	! grep -q 'not supported\|not counted' "$TMP/perf-probe.txt" && PERF_OK=1
echo "perf_instructions=$PERF_OK ($(grep -m1 instructions "$TMP/perf-probe.txt" 2>/dev/null | tr ',' ' '))" >>"$TMP/meta.txt"
for a in "${ALLOCS[@]}"; do
	aname=${a%%|*}
	for n in 1000000 2000000; do
		# The child's environment as the runner would give it, for valgrind.
		bench_valgrind_env "${a#*|}"
		envs=("${BENCH_ENV[@]}")
		cgout=/dev/null
		[ "$n" = 2000000 ] && cgout=$TMP/callgrind-$aname.out
		ir=$("${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$cgout" \
			"$B/fastpath" "$n" 2>&1 >/dev/null | awk '/Collected :/ { print $NF }' | tail -1) || true
		printf '%s\tcallgrind\t%s\t%s\n' "$aname" "$n" "${ir:-nan}" >>"$CG"
		if [ "$PERF_OK" = 1 ]; then
			ir=$("${envs[@]}" perf stat -x, -e instructions:u "$B/fastpath" "$n" 2>&1 >/dev/null |
				awk -F, '/instructions/ { print $1 }') || true
			printf '%s\tperf\t%s\t%s\n' "$aname" "$n" "${ir:-nan}" >>"$CG"
		fi
	done
done
log "fast path instructions: done"

# ---- phase 7: memory given back ----------------------------------------------
for a in "${ALLOCS[@]}"; do
	res=$(run_one "${a#*|}" - "$TMP/memret-${a%%|*}.txt" 120 "$B/memory_return" "$MEMRET_MIB")
	echo "# runner ${res//$'\t'/ }" >>"$TMP/memret-${a%%|*}.txt"
	log "memory_return ${a%%|*}: $res"
done

# ---- phase 8: report ------------------------------------------------------------
bench_load_stop
echo "finished=$(date '+%F %T %Z')" >>"$TMP/meta.txt"
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$TMP/meta.txt"
"$PY" "$BENCH/report.py" --dir "$TMP" --out "$OUT/$DATE-$TAG"
log "wrote $OUT/$DATE-$TAG.md (+ .png, -memory.png, .tsv)"
