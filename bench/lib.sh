# SPDX-License-Identifier: MIT
# bench/lib.sh: what the benchmark scripts share (sourced, not run):
# bench/run.sh (synthetic workloads), bench/mimalloc_bench.sh (the field's
# suite), bench/real_programs.sh (unmodified Debian programs) and the A/B
# scripts (bench/ab_*.sh).
#
#   ROOT=... BENCH=... TMP=... ; . "$BENCH/lib.sh"
#   bench_build_heapscope   -> HS_LIB (the library to preload), HS_STATE ("ok"
#                              or why not)
#   bench_build_suite       -> B (bench/build), RUNNER
#   bench_allocators LIST   -> ALLOCS ("name|runner options"), LIST may be ""
#   bench_meta_common PKG.. -> machine, package and commit lines for meta.txt
#   bench_load_start        -> samples the 1-minute load every 10 s into
#                              $TMP/load.txt until bench_load_stop (or exit)
#   bench_run_one OPTS IN OUT TIMEOUT CMD... -> "wall rss status"
#   bench_valgrind_env OPTS -> BENCH_ENV: an env(1) command line that gives
#                              a command the allocator's environment
#   bench_preload NAME DIR  -> PRELOAD_LIB (empty for glibc), PRELOAD_ENV
#                              (VAR=VALUE words) of one allocator, heapscope's
#                              from build directory DIR; 2 if NAME is unknown
#   bench_mb_programs SUITE P DUR -> MB_PROGRAMS: mimalloc-bench's command
#                              lines as bench.sh runs them
#   bench_mb_metric KIND OUT WALL -> the figure bench.sh records (seconds)
#   bench_ab_configs PROG CONFIG... -> NAMES, LIBS, ENVS of NAME=LIB[,V=X]
#                              configurations (the A/B scripts; at least two)
#
# The caller has ROOT (the repository), BENCH ($ROOT/bench) and TMP (a fresh
# working directory) set, and runs with `set -euo pipefail`.

LIBDIR=/usr/lib/x86_64-linux-gnu
PY=/usr/bin/python3 # Debian's, not a pyenv shim that may come first in PATH

bench_log() { echo "bench: $*" >&2; }

# Builds build-bench/allocator/libheapscope.so (top-level CMake, collector and
# tests off). A library that does not build, or does not export malloc yet,
# is reported in HS_STATE and its columns are skipped or marked.
bench_build_heapscope() {
	HS_LIB=$ROOT/build-bench/allocator/libheapscope.so
	HS_STATE=ok
	bench_log "building libheapscope.so (build-bench)"
	if ! { cmake -S "$ROOT" -B "$ROOT/build-bench" -DHEAPSCOPE_BUILD_COLLECTOR=OFF \
		-DHEAPSCOPE_BUILD_TESTS=OFF >"$TMP/build-heapscope.log" 2>&1 &&
		cmake --build "$ROOT/build-bench" -j"$(nproc)" >>"$TMP/build-heapscope.log" 2>&1; }; then
		HS_STATE="did not build (see the build log excerpt below)"
		bench_log "libheapscope.so did not build: heapscope columns skipped"
	elif ! nm -D --defined-only "$HS_LIB" | awk '$3 == "malloc" { f = 1 } END { exit !f }'; then
		HS_STATE="libheapscope.so does not export malloc yet: its columns measure glibc"
		bench_log "$HS_STATE"
	fi
	if [ "$HS_STATE" != ok ]; then
		grep -m5 -E 'error|Error' "$TMP/build-heapscope.log" >"$TMP/build-heapscope.excerpt" || true
	fi
	# Preload a copy whose file name does not start with "libheapscope": a
	# heapscope daemon left running on the machine (by a test, say) follows
	# every process that maps a file of that name, and would put its probes
	# (int3 traps under valgrind) and BPF programs into the runs measured.
	if [ -f "$HS_LIB" ]; then
		cp "$HS_LIB" "$ROOT/build-bench/bench-preload-heapscope.so"
		HS_LIB=$ROOT/build-bench/bench-preload-heapscope.so
	fi
}

# Builds the runner, the glibc shim and the synthetic workloads (bench/build).
bench_build_suite() {
	bench_log "building the runner and workloads (bench/build)"
	cmake -S "$BENCH" -B "$BENCH/build" >"$TMP/build-bench.log" 2>&1
	cmake --build "$BENCH/build" -j"$(nproc)" >>"$TMP/build-bench.log" 2>&1 ||
		{ cat "$TMP/build-bench.log" >&2; exit 1; }
	B=$BENCH/build
	RUNNER=$B/runner
}

# The six configurations: name|runner environment options. Only LIST's names
# are kept when LIST is not empty; heapscope's two are dropped when it has no
# library at all.
bench_allocators() {
	local only=$1 a sel=()
	ALLOCS=(
		"glibc|-u LD_PRELOAD"
		"jemalloc|-e LD_PRELOAD=$LIBDIR/libjemalloc.so.2"
		"tcmalloc|-e LD_PRELOAD=$LIBDIR/libtcmalloc_minimal.so.4"
		"mimalloc|-e LD_PRELOAD=$LIBDIR/libmimalloc.so.2"
		"heapscope-off|-e LD_PRELOAD=$HS_LIB -e HEAPSCOPE_SAMPLE_RATE=0"
		"heapscope|-e LD_PRELOAD=$HS_LIB -u HEAPSCOPE_SAMPLE_RATE"
	)
	if [ "$HS_STATE" != ok ] && [ ! -f "$HS_LIB" ]; then
		ALLOCS=("${ALLOCS[@]:0:4}")
	fi
	if [ -n "$only" ]; then
		for a in "${ALLOCS[@]}"; do
			[[ ",$only," == *",${a%%|*},"* ]] && sel+=("$a")
		done
		ALLOCS=("${sel[@]}")
	fi
	if [ ${#ALLOCS[@]} -eq 0 ]; then
		echo "bench: no allocator left to run (--allocators '$only'?)" >&2
		exit 2
	fi
}

# Lines for meta.txt that every results file gives: the machine, the versions
# of the peers and of the packages named, and the commit measured.
bench_meta_common() {
	local p
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "nproc=$(nproc)"
	echo "kernel=$(uname -r)"
	echo "glibc=$(ldd --version | head -1 | awk '{print $NF}')"
	for p in libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 valgrind "$@"; do
		echo "pkg.$p=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo none)"
	done
	echo "commit=$(git -C "$ROOT" log -1 --format='%h %<(72,trunc)%s' 2>/dev/null | sed 's/ *$//')"
	echo "allocator_commit=$(git -C "$ROOT" log -1 --format='%h %<(72,trunc)%s' -- allocator 2>/dev/null | sed 's/ *$//')"
	echo "heapscope_state=$HS_STATE"
	echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
	# heapscope daemons running (other than ours: we start none); see
	# bench_build_heapscope for why the preloaded copy has another name.
	echo "daemons_before=$(ps -eo comm=,args= | awk '$1 == "heapscope" && / daemon / { n++ } END { print n + 0 }')"
}

# Busy-machine probe: the load of other processes, sampled in the background.
bench_load_start() {
	(while :; do
		cut -d' ' -f1 /proc/loadavg
		sleep 10
	done >"$TMP/load.txt") &
	LOAD_PID=$!
	trap 'kill $LOAD_PID 2>/dev/null || true' EXIT
}

bench_load_stop() {
	kill "$LOAD_PID" 2>/dev/null || true
}

# bench_run_one ALLOC_OPTS STDIN OUTFILE TIMEOUT CMD... : prints
# "wall rss status" (tab-separated), as bench/runner.c does.
bench_run_one() {
	local opts=$1 in=$2 out=$3 to=$4
	shift 4
	local io=()
	[ "$in" != - ] && io+=(-i "$in")
	[ "$out" != - ] && io+=(-o "$out")
	# shellcheck disable=SC2086 # opts is a list of runner options
	"$RUNNER" $opts "${io[@]}" -t "$to" -- "$@"
}

# The runner's -e/-u options as an env(1) command (env takes its -u options
# before the assignments), for tools that run the command themselves
# (valgrind).
bench_valgrind_env() {
	local opts k unsets=() sets=()
	read -ra opts <<<"$1"
	for ((k = 0; k < ${#opts[@]}; k += 2)); do
		case ${opts[k]} in
		-e) sets+=("${opts[k + 1]}") ;;
		-u) unsets+=(-u "${opts[k + 1]}") ;;
		esac
	done
	BENCH_ENV=(env "${unsets[@]}" "${sets[@]}")
}

# One allocator as a preload, for the scripts that run a command directly
# (bench/alloc_reuse.sh, bench/rss_at_peak.sh).
bench_preload() {
	PRELOAD_LIB= PRELOAD_ENV=()
	case $1 in
	heapscope) PRELOAD_LIB=$2/allocator/libheapscope.so ;;
	heapscope-off) PRELOAD_LIB=$2/allocator/libheapscope.so
		PRELOAD_ENV=(HEAPSCOPE_SAMPLE_RATE=0) ;;
	mimalloc) PRELOAD_LIB=$LIBDIR/libmimalloc.so.2 ;;
	tcmalloc) PRELOAD_LIB=$LIBDIR/libtcmalloc_minimal.so.4 ;;
	jemalloc) PRELOAD_LIB=$LIBDIR/libjemalloc.so.2 ;;
	glibc) ;;
	*) return 2 ;;
	esac
}

# mimalloc-bench's programs as bench.sh runs them (used by
# bench/mimalloc_bench.sh and bench/ab_mimalloc_bench.sh): sets MB_PROGRAMS,
# one "name|binary|arguments|metric|threads|flags" each, for sources SUITE,
# bench.sh's procs P and the throughput programs' duration DUR (s).  flags:
# "extra" (only with --programs all or by name), "multi" (skipped at 1
# thread, as bench.sh does).  The metric is what bench.sh records: wall
# time, or for larson, rptest, xmalloc-test and glibc-thread a relative time
# made from the program's own throughput figure (bench_mb_metric).
bench_mb_programs() {
	local suite=$1 p=$2 dur=$3 at_n=$(($2 > 16 ? 16 : $2))
	MB_PROGRAMS=(
		"cfrac|cfrac|17545186520507317056371138836327483792789528|wall|1"
		"espresso|espresso|$suite/espresso/largest.espresso|wall|1"
		"larsonN-sized|larson-sized|$dur 8 1000 5000 100 4141 $p|larson|$p"
		"mstressN|mstress|$p 50 25|wall|$p"
		"rptestN|rptest|$p 0 1 2 500 1000 100 8 16000|rptest|$p"
		"alloc-test1|alloc-test|1|wall|1"
		"alloc-testN|alloc-test|$at_n|wall|$at_n|multi"
		"xmalloc-testN|xmalloc-test|-w $p -t $dur -s 64|xmalloc|$p"
		"cache-scratch1|cache-scratch|1 1000 1 2000000 $p|wall|1"
		"cache-scratchN|cache-scratch|$p 1000 1 2000000 $p|wall|$p|multi"
		"glibc-simple|glibc-simple||wall|1"
		"glibc-thread|glibc-thread|$p|glibc-thread|$p"
		"malloc-large|malloc-large||wall|1"
		"larsonN|larson|$dur 8 1000 5000 100 4141 $p|larson|$p|extra"
		"cache-thrash1|cache-thrash|1 1000 1 2000000 $p|wall|1|extra"
		"cache-thrashN|cache-thrash|$p 1000 1 2000000 $p|wall|$p|extra,multi"
	)
}

# bench_mb_metric KIND STDOUT WALL: the figure bench.sh records for a
# program of metric KIND (bench_mb_programs), in seconds; "nan" when the
# output has none.
bench_mb_metric() {
	local v
	case $1 in
	wall) echo "$3" ;;
	larson) # "... relative time: 23.030s."
		v=$(sed -n 's/.* time: \([0-9.]*\).*/\1/p' "$2" | head -1)
		echo "${v:-nan}" ;;
	rptest) # "...3205653 memory ops/CPU second": 2000000 / ops
		v=$(sed -n 's/.*\.\.\.\([0-9]*\) memory ops.*/\1/p' "$2" | head -1)
		awk -v o="${v:-0}" 'BEGIN { if (o > 0) printf "%.4f\n", 2000000 / o; else print "nan" }' ;;
	xmalloc) # "rtime: 4.866, free/sec: 20.551 M"
		v=$(sed -n 's/rtime: \([0-9.]*\).*/\1/p' "$2" | head -1)
		echo "${v:-nan}" ;;
	glibc-thread) # "31521520 iterations": 1e9 / iterations
		v=$(sed -n 's/^\([0-9.]*\).*/\1/p' "$2" | head -1)
		awk -v o="${v:-0}" 'BEGIN { if (o > 0) printf "%.4f\n", 1e9 / o; else print "nan" }' ;;
	*) echo nan ;;
	esac
}

# bench_ab_configs PROG CONFIG...: the A/B scripts' configurations,
# NAME=LIB[,VAR=VALUE...] each (LIB preloaded with the variables set; "none"
# is the C library's malloc), into NAMES, LIBS (absolute) and ENVS (the
# variables, space-separated).  Exits 2 with a message on a bad one or on
# fewer than two.
bench_ab_configs() {
	local prog=$1 c name rest lib vars
	shift
	[ $# -ge 2 ] || { echo "$prog: give at least two configurations (see --help)" >&2; exit 2; }
	NAMES=() LIBS=() ENVS=()
	for c in "$@"; do
		[[ $c == *=* ]] || { echo "$prog: bad configuration '$c' (NAME=LIB[,VAR=VALUE...])" >&2; exit 2; }
		name=${c%%=*} rest=${c#*=}
		lib=${rest%%,*} vars=
		[[ $rest == *,* ]] && vars=${rest#*,}
		if [ "$lib" != none ]; then
			[ -r "$lib" ] || { echo "$prog: $name: cannot read $lib" >&2; exit 2; }
			lib=$(realpath "$lib")
		fi
		NAMES+=("$name") LIBS+=("$lib") ENVS+=("${vars//,/ }")
	done
}
