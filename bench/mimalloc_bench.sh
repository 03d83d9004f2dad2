#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mimalloc-bench, the field's allocator suite, run against heapscope and its
# peers. The project keeps only this script: the programs are compiled from a
# mimalloc-bench checkout (its bench/ directory: sources, inputs, LICENSE)
# into bench/build/mimalloc-bench/, and run with the command lines of
# mimalloc-bench's own bench.sh at the machine's thread count, under the six
# configurations of bench/lib.sh, interleaved. Writes
# bench/results/<date>-mimalloc-bench.{md,tsv,png}. It reports; it never
# fails on a timing.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/mimalloc_bench.sh [--suite DIR] [--runs N] [--quick] [--bench-sh]
                               [--programs LIST] [--allocators LIST]
                               [--threads N] [--timeout S] [--instructions]
                               [--no-bootstrap] [--tag NAME]

  --suite DIR       mimalloc-bench's bench/ sources (default:
                    $MIMALLOC_BENCH_DIR, else <repo>/../shared/peer-suites/
                    mimalloc-bench; in a git worktree, beside the main checkout)
  --runs N          runs of each program under each allocator (default 5;
                    --quick: 2)
  --quick           2 runs and the shorter durations (a smoke run)
  --bench-sh        bench.sh's command lines exactly; by default larsonN-sized,
                    larsonN and xmalloc-testN run 2 s instead of 5 s (their
                    metric is a throughput, so only its noise changes)
  --programs LIST   comma-separated; default the 13 of bench.sh's "allt" set
                    that the checkout has, plus malloc-large; "all" adds
                    larsonN, cache-thrash1, cache-thrashN
  --allocators LIST subset of glibc,jemalloc,tcmalloc,mimalloc,heapscope-off,heapscope
  --threads N       bench.sh's $procs (default: nproc)
  --timeout S       a run taking longer is killed, recorded as a timeout and
                    not run again (default 120)
  --instructions    also count instructions once per program and allocator
                    under valgrind (cachegrind, no cache simulation) for the
                    programs of fixed work (not larson, xmalloc-test, rptest,
                    glibc-thread, which run for a fixed time); ~15 x each
                    program's time: about 45 minutes more on 2 cores
  --no-bootstrap    do not check/install the Debian packages
  --tag NAME        results name suffix (default mimalloc-bench, or
                    mimalloc-bench-quick)

examples:
  bench/mimalloc_bench.sh                       # full run, ~25 min on 2 cores
  bench/mimalloc_bench.sh --quick --programs cfrac,rptestN
  bench/mimalloc_bench.sh --suite ~/src/mimalloc-bench/bench --bench-sh --runs 7
EOF
}

SELF=$(realpath "$0")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd)
BENCH=$ROOT/bench
# Default: shared/ beside the repository; from a git worktree, beside the
# main checkout the worktree belongs to.
SUITE=${MIMALLOC_BENCH_DIR:-$ROOT/../shared/peer-suites/mimalloc-bench}
if [ -z "${MIMALLOC_BENCH_DIR:-}" ] && [ ! -d "$SUITE" ]; then
	common=$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
	[ -n "$common" ] && SUITE=$(dirname "$common")/../shared/peer-suites/mimalloc-bench
fi
RUNS= QUICK=0 BENCH_SH=0 ONLY_PROG= ONLY_ALLOC= BOOTSTRAP=1 TAG=
PROCS=$(nproc) RUN_TIMEOUT=120 INSTRUCTIONS=0

while [ $# -gt 0 ]; do
	case $1 in
	--suite) SUITE=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--quick) QUICK=1; shift ;;
	--bench-sh) BENCH_SH=1; shift ;;
	--programs) ONLY_PROG=$2; shift 2 ;;
	--allocators) ONLY_ALLOC=$2; shift 2 ;;
	--threads) PROCS=$2; shift 2 ;;
	--timeout) RUN_TIMEOUT=$2; shift 2 ;;
	--instructions) INSTRUCTIONS=1; shift ;;
	--no-bootstrap) BOOTSTRAP=0; shift ;;
	--tag) TAG=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench/mimalloc_bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
if [ ! -f "$SUITE/cfrac/cfrac.c" ]; then
	echo "bench/mimalloc_bench.sh: no mimalloc-bench sources at $SUITE (expected cfrac/cfrac.c there); give --suite DIR" >&2
	exit 2
fi
SUITE=$(cd "$SUITE" && pwd)
if [ "$QUICK" = 1 ]; then
	RUNS=${RUNS:-2}; TAG=${TAG:-mimalloc-bench-quick}
else
	RUNS=${RUNS:-5}; TAG=${TAG:-mimalloc-bench}
fi
DUR=2
[ "$BENCH_SH" = 1 ] && DUR=5

DATE=$(date +%F)
OUT=$BENCH/results
TMP=$OUT/tmp/$TAG
BUILD=$BENCH/build/mimalloc-bench
rm -rf "$TMP"
mkdir -p "$TMP" "$BUILD"
. "$BENCH/lib.sh"

# ---- phase 1: packages, heapscope, the runner ---------------------------------
[ "$BOOTSTRAP" = 1 ] && bash "$BENCH/bootstrap.sh"
bench_build_heapscope
bench_build_suite
bench_allocators "$ONLY_ALLOC"

# ---- phase 2: the programs, compiled from the checkout ---------------------------
# name|language|sources (relative to the suite)|flags and libraries, as the
# checkout's CMakeLists.txt gives them (Release: -O3 -DNDEBUG, warnings off).
CFRAC_SRC="cfrac.c pops.c pconst.c pio.c pabs.c pneg.c pcmp.c podd.c phalf.c padd.c
	psub.c pmul.c pdivmod.c psqrt.c ppowmod.c atop.c ptoa.c itop.c utop.c ptou.c errorp.c
	pfloat.c pidiv.c pimod.c picmp.c primes.c pcfrac.c pgcd.c"
ESPRESSO_SRC="cofactor.c cols.c compl.c contain.c cubestr.c cvrin.c cvrm.c cvrmisc.c
	cvrout.c dominate.c equiv.c espresso.c essen.c exact.c expand.c gasp.c getopt.c
	gimpel.c globals.c hack.c indep.c irred.c main.c map.c matrix.c mincov.c opo.c pair.c
	part.c primes.c reduce.c rows.c set.c setc.c sharp.c sminterf.c solution.c sparse.c
	unate.c utility.c verify.c"
BINARIES=(
	"cfrac|c|$(for f in $CFRAC_SRC; do printf 'cfrac/%s ' "$f"; done)|-std=gnu89 -DNOMEMOPT=1 -lm"
	"espresso|c|$(for f in $ESPRESSO_SRC; do printf 'espresso/%s ' "$f"; done)|-std=gnu89 -lm"
	"larson|c++|larson/larson.cpp|-DCPP=1 -pthread"
	"larson-sized|c++|larson/larson.cpp|-DCPP=1 -DSIZED=1 -fsized-deallocation -pthread"
	"alloc-test|c++|alloc-test/test_common.cpp alloc-test/allocator_tester.cpp|-DBENCH=4 -pthread"
	"cache-scratch|c++|cache-scratch/cache-scratch.cpp|-pthread"
	"cache-thrash|c++|cache-thrash/cache-thrash.cpp|-pthread"
	"xmalloc-test|c|xmalloc-test/xmalloc-test.c|-pthread"
	"malloc-large|c++|malloc-large/malloc-large.cpp|-pthread"
	"mstress|c|mstress/mstress.c|-pthread"
	"rptest|c|rptest/rptest.c rptest/thread.c rptest/timer.c|-Irptest -pthread -lm"
	"glibc-simple|c|glibc-bench/bench-malloc-simple.c|-pthread"
	"glibc-thread|c|glibc-bench/bench-malloc-thread.c|-pthread"
)
declare -A BUILT=()
bench_log "compiling mimalloc-bench's programs from $SUITE into $BUILD"
build_one() { # name lang sources flags: compiles if a source or this script is newer
	local name=$1 lang=$2 srcs=$3 flags=$4 cc=cc s
	[ "$lang" = c++ ] && cc=c++
	for s in $srcs; do
		[ -f "$SUITE/$s" ] || { echo "not in the checkout: $s" >"$BUILD/$name.log"; return 1; }
	done
	if [ -x "$BUILD/$name" ] && [ -z "$(cd "$SUITE" && find $srcs "$SELF" -newer "$BUILD/$name" 2>/dev/null)" ]; then
		return 0
	fi
	# shellcheck disable=SC2086 # sources and flags are lists
	(cd "$SUITE" && $cc -O3 -DNDEBUG -w $srcs $flags -o "$BUILD/$name") >"$BUILD/$name.log" 2>&1
}
pids=()
for b in "${BINARIES[@]}"; do
	IFS='|' read -r name lang srcs flags <<<"$b"
	build_one "$name" "$lang" "$srcs" "$flags" &
	pids+=("$!:$name")
	# at most nproc compilers at once
	if [ ${#pids[@]} -ge "$(nproc)" ]; then
		wait "${pids[0]%%:*}" && BUILT[${pids[0]#*:}]=1 || true
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do
	wait "${p%%:*}" && BUILT[${p#*:}]=1 || true
done

# ---- phase 3: what runs --------------------------------------------------------------
# bench.sh's command lines at procs = $PROCS, and its metric (bench/lib.sh
# bench_mb_programs, bench_mb_metric).
P=$PROCS
bench_mb_programs "$SUITE" "$P" "$DUR"
# bench.sh's "allt" tests (and the rest) that cannot run from this checkout.
NOTES=$TMP/notes.txt
{
	echo "barnes|sources not in the checkout (bench.sh builds it from bench/barnes; the checkout has no barnes/ directory)"
	echo "sh6benchN, sh8benchN|not in the checkout: bench.sh's build-bench-env.sh downloads them from the vendor (MicroQuill) and patches them; no network here"
	echo "redis, rocksdb, lean, lua, gs, linux, z3, spec, rbstress, mleak|external programs (or sources) that bench.sh downloads and builds; bench/run.sh runs Debian's redis, bench/real_programs.sh runs other Debian programs"
} >"$NOTES"
sel=()
for p in "${MB_PROGRAMS[@]}"; do
	IFS='|' read -r name bin args metric T flags <<<"$p"
	if [ -n "$ONLY_PROG" ] && [ "$ONLY_PROG" != all ]; then
		[[ ",$ONLY_PROG," == *",$name,"* ]] || continue
	elif [[ ${flags:-} == *extra* ]] && [ "$ONLY_PROG" != all ]; then
		continue
	fi
	[ "$P" = 1 ] && [[ ${flags:-} == *multi* ]] && continue # as bench.sh at procs=1
	if [ -z "${BUILT[$bin]:-}" ]; then
		echo "$name|did not build: $(grep -m1 -iE 'error|not in the checkout' "$BUILD/$bin.log" || head -1 "$BUILD/$bin.log")" >>"$NOTES"
		bench_log "$name: $bin did not build (see $BUILD/$bin.log)"
		continue
	fi
	sel+=("$name|$bin|$args|$metric|$T")
done
PROGRAMS=("${sel[@]}")
[ ${#PROGRAMS[@]} -gt 0 ] || { echo "bench/mimalloc_bench.sh: no program to run" >&2; exit 2; }

# ---- phase 4: metadata ------------------------------------------------------------
{
	echo "family=mimalloc-bench"
	echo "date=$DATE"
	echo "started=$(date '+%F %T %Z')"
	echo "tag=$TAG"
	echo "quick=$QUICK"
	echo "runs=$RUNS"
	echo "procs=$PROCS"
	echo "timeout=$RUN_TIMEOUT"
	echo "suite=$SUITE"
	echo "suite_license=$(head -3 "$SUITE/LICENSE" 2>/dev/null | tr '\n' ' ')"
	echo "bench_sh=$BENCH_SH"
	echo "duration=$DUR"
	echo "compiler=$(cc --version | head -1)"
	cmd="bench/mimalloc_bench.sh"
	[ "$QUICK" = 1 ] && cmd+=" --quick"
	[ "$BENCH_SH" = 1 ] && cmd+=" --bench-sh"
	[ -n "$ONLY_PROG" ] && cmd+=" --programs $ONLY_PROG"
	[ -n "$ONLY_ALLOC" ] && cmd+=" --allocators $ONLY_ALLOC"
	[ "$RUNS" != 5 ] && [ "$QUICK" = 0 ] && cmd+=" --runs $RUNS"
	[ "$INSTRUCTIONS" = 1 ] && cmd+=" --instructions"
	echo "ins_scale=$([ "$INSTRUCTIONS" = 1 ] && echo "the timed command lines" || echo off)"
	echo "rerun=$cmd"
	bench_meta_common
} >"$TMP/meta.txt"
{
	printf 'name\tmetric\tcommand\n'
	for p in "${PROGRAMS[@]}"; do
		IFS='|' read -r name bin args metric T <<<"$p"
		case $metric in
		wall) metric="wall time" ;;
		larson) metric="relative time printed by larson" ;;
		rptest) metric="2000000 / (memory ops per CPU second)" ;;
		xmalloc) metric="rtime printed by xmalloc-test (100 / M frees per second)" ;;
		glibc-thread) metric="1e9 / iterations" ;;
		esac
		printf '%s\t%s\t%s\n' "$name" "$metric" "./$bin $args"
	done
} >"$TMP/programs.tsv"
bench_load_start

# ---- phase 5: the runs, interleaved ------------------------------------------------
RAW=$TMP/raw.tsv
printf 'workload\tthreads\tallocator\trun\twall_s\tmaxrss_kib\tstatus\ttime_s\tload1\n' >"$RAW"
n_alloc=${#ALLOCS[@]}
declare -A TIMED_OUT=()
bench_log "runs=$RUNS procs=$PROCS allocators=$n_alloc programs=${#PROGRAMS[@]}"
for run in $(seq 1 "$RUNS"); do
	for p in "${PROGRAMS[@]}"; do
		IFS='|' read -r name bin args kind T <<<"$p"
		for i in $(seq 0 $((n_alloc - 1))); do
			a=${ALLOCS[$(((i + run) % n_alloc))]}
			aname=${a%%|*}
			load=$(cut -d' ' -f1 /proc/loadavg)
			if [ -n "${TIMED_OUT["$name $aname"]:-}" ]; then
				printf '%s\t%s\t%s\t%s\tnan\t0\ttimeout-skipped\tnan\t%s\n' "$name" "$T" "$aname" "$run" "$load" >>"$RAW"
				continue
			fi
			out=$TMP/out-$name-$aname.txt
			# bench.sh runs each program in its build directory (larson,
			# xmalloc-test and rptest write nothing else there).
			# shellcheck disable=SC2086 # args is a list
			res=$(cd "$BUILD" && bench_run_one "${a#*|}" - "$out" "$RUN_TIMEOUT" "./$bin" $args 2>"$TMP/err-$name-$aname.txt")
			IFS=$'\t' read -r wall rss status <<<"$res"
			[ "$status" = timeout ] && TIMED_OUT["$name $aname"]=1
			t=nan
			if [ "$status" = ok ]; then
				t=$(bench_mb_metric "$kind" "$out" "$wall")
				[ "$t" = nan ] && status=no-metric
			fi
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$T" "$aname" "$run" "$wall" "$rss" "$status" "$t" "$load" >>"$RAW"
			bench_log "run $run/$RUNS $name $aname: wall $wall s, metric $t s, rss $rss KiB, $status"
		done
	done
done

# ---- phase 6: instructions (--instructions) -------------------------------------------
# Once per program of fixed work and allocator, the command line timed above,
# under valgrind's cachegrind without cache simulation, children followed
# (none here); valgrind runs the threads one at a time.
if [ "$INSTRUCTIONS" = 1 ]; then
	CG=$TMP/instructions.tsv
	printf 'workload\tallocator\tinstructions\tstatus\n' >"$CG"
	for p in "${PROGRAMS[@]}"; do
		IFS='|' read -r name bin args kind T <<<"$p"
		[ "$kind" = wall ] || continue
		for a in "${ALLOCS[@]}"; do
			aname=${a%%|*}
			rm -rf "$TMP/cg"
			mkdir -p "$TMP/cg"
			bench_valgrind_env "${a#*|}"
			st=ok
			# shellcheck disable=SC2086 # args is a list
			(cd "$BUILD" && "${BENCH_ENV[@]}" valgrind --tool=cachegrind --cache-sim=no \
				--trace-children=yes --cachegrind-out-file=/dev/null \
				--log-file="$TMP/cg/%p.log" "./$bin" $args </dev/null >/dev/null 2>&1) || st="exit:$?"
			ir=$(cat "$TMP"/cg/*.log 2>/dev/null | awk '/I *refs:/ { gsub(",", "", $NF); n += $NF } END { printf "%.0f", n }')
			[ "${ir:-0}" = 0 ] && { ir=nan; [ "$st" = ok ] && st=no-count; }
			printf '%s\t%s\t%s\t%s\n' "$name" "$aname" "$ir" "$st" >>"$CG"
			bench_log "instructions $name $aname: $ir ($st)"
		done
	done
	rm -rf "$TMP/cg"
fi

# ---- phase 7: report -----------------------------------------------------------------
bench_load_stop
echo "finished=$(date '+%F %T %Z')" >>"$TMP/meta.txt"
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$TMP/meta.txt"
"$PY" "$BENCH/report.py" --family --dir "$TMP" --out "$OUT/$DATE-$TAG"
bench_log "wrote $OUT/$DATE-$TAG.md (+ .png, .tsv)"
