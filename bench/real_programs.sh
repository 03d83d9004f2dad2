#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real programs nobody here wrote: unmodified Debian packages (a sort, gawk,
# jq, xmllint, xsltproc, gcc, git; perl, python3, lua5.4 and ruby running
# scripts of bench/programs; g++, cppcheck, graphviz's dot, groff) on
# inputs this script generates from a seed, under the six configurations
# of bench/lib.sh, interleaved. Every run's output is hashed and must
# match the first run's under every allocator: a difference fails the run
# and the script exits non-zero after writing the report. Instructions are
# counted once per program and allocator under valgrind (cachegrind, no
# cache simulation) on smaller inputs. Writes
# bench/results/<date>-real-programs.{md,tsv,png}. It reports; it never
# fails on a timing.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/real_programs.sh [--runs N] [--quick] [--scale S] [--seed N]
                              [--programs LIST] [--allocators LIST]
                              [--ins-scale S | --no-instructions]
                              [--timeout S] [--no-bootstrap] [--tag NAME]

  --runs N          runs of each program under each allocator (default 5;
                    --quick: 2)
  --quick           2 runs, inputs at scale 0.3, instructions at 0.05
  --scale S         input size (default 1: ~1-3 s per program on 2 idle cores)
  --seed N          input generator seed (default 1)
  --programs LIST   comma-separated subset of sort,gawk,jq,xmllint,xsltproc,
                    gcc,git,perl,python3,lua,ruby,g++,cppcheck,dot,groff
  --allocators LIST subset of glibc,jemalloc,tcmalloc,mimalloc,heapscope-off,heapscope
  --ins-scale S     input scale of the instruction counts (default 0.2 x --scale)
  --no-instructions do not count instructions
  --timeout S       a run taking longer is killed and recorded as a timeout,
                    and that cell is not run again (default 120)
  --no-bootstrap    do not check/install the Debian packages
  --tag NAME        results name suffix (default real-programs, or
                    real-programs-quick)

examples:
  bench/real_programs.sh                      # full run, ~30 min on 2 cores
  bench/real_programs.sh --quick --programs jq,xmllint
  bench/real_programs.sh --runs 9 --no-instructions
EOF
}

ROOT=$(cd "$(dirname "$(realpath "$0")")/.." && pwd)
BENCH=$ROOT/bench
RUNS= QUICK=0 SCALE= SEED=1 ONLY_PROG= ONLY_ALLOC= BOOTSTRAP=1 TAG=
INS_SCALE= INSTRUCTIONS=1 RUN_TIMEOUT=120

while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=$2; shift 2 ;;
	--quick) QUICK=1; shift ;;
	--scale) SCALE=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--programs) ONLY_PROG=$2; shift 2 ;;
	--allocators) ONLY_ALLOC=$2; shift 2 ;;
	--ins-scale) INS_SCALE=$2; shift 2 ;;
	--no-instructions) INSTRUCTIONS=0; shift ;;
	--timeout) RUN_TIMEOUT=$2; shift 2 ;;
	--no-bootstrap) BOOTSTRAP=0; shift ;;
	--tag) TAG=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench/real_programs.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
if [ "$QUICK" = 1 ]; then
	RUNS=${RUNS:-2}; SCALE=${SCALE:-0.3}; TAG=${TAG:-real-programs-quick}
else
	RUNS=${RUNS:-5}; SCALE=${SCALE:-1}; TAG=${TAG:-real-programs}
fi
INS_SCALE=${INS_SCALE:-$(awk -v s="$SCALE" -v q="$QUICK" 'BEGIN { printf "%g", s * (q ? 0.17 : 0.2) }')}

DATE=$(date +%F)
OUT=$BENCH/results
TMP=$OUT/tmp/$TAG
rm -rf "$TMP"
mkdir -p "$TMP"
. "$BENCH/lib.sh"
P=$BENCH/programs

# ---- phase 1: packages, heapscope, the runner ---------------------------------
[ "$BOOTSTRAP" = 1 ] && bash "$BENCH/bootstrap.sh"
bench_build_heapscope
bench_build_suite
bench_allocators "$ONLY_ALLOC"

# ---- phase 2: inputs ------------------------------------------------------------------
bench_log "generating inputs (scale $SCALE, seed $SEED)"
"$PY" "$P/realprog_inputs.py" "$TMP/in" "$SCALE" "$SEED"
{
	printf 'file\tbytes\tsha256\n'
	for f in "$TMP"/in/*; do
		printf '%s\t%s\t%s\n' "$(basename "$f")" "$(stat -c %s "$f")" "$(sha256sum <"$f" | cut -d' ' -f1)"
	done
} >"$TMP/inputs.tsv"
if [ "$INSTRUCTIONS" = 1 ]; then
	"$PY" "$P/realprog_inputs.py" "$TMP/in-ins" "$INS_SCALE" "$SEED"
fi

# ---- phase 3: the programs ---------------------------------------------------------------
# PROGRAMS: name|what is compared|command (bench/programs/real_programs.list,
# shared with bench/ab_real_programs.sh).
. "$P/real_programs.list"
if [ -n "$ONLY_PROG" ]; then
	sel=()
	for p in "${PROGRAMS[@]}"; do
		[[ ",$ONLY_PROG," == *",${p%%|*},"* ]] && sel+=("$p")
	done
	PROGRAMS=("${sel[@]}")
fi
[ ${#PROGRAMS[@]} -gt 0 ] || { echo "bench/real_programs.sh: no program left (--programs '$ONLY_PROG'?)" >&2; exit 2; }

# cmd_of PROGRAM INPUTS WORKDIR: sets CMD (an array) to the command line.
cmd_of() {
	local spec=$1 in=$2 work=$3 line
	line=${spec#*|}
	line=${line#*|}
	line=${line//I\//$in/}
	line=${line//W\//$work/}
	eval "CMD=($line)"
	CMD=(env LC_ALL=C TZ=UTC TMPDIR="$work" "${CMD[@]}")
}

# outputs_hash PROGRAM STDOUT WORKDIR: sha256 over what the program is judged by.
outputs_hash() {
	local name=$1 out=$2 work=$3
	case $name in
	gcc | g++) { cat "$out"; cat "$work/gen.o" 2>/dev/null || echo "no gen.o"; } | sha256sum | cut -d' ' -f1 ;;
	cppcheck) { cat "$out"; cat "$work/cppcheck.txt" 2>/dev/null || echo "no cppcheck.txt"; } | sha256sum | cut -d' ' -f1 ;;
	*) sha256sum <"$out" | cut -d' ' -f1 ;;
	esac
}

# ---- phase 4: metadata --------------------------------------------------------------
{
	echo "family=real-programs"
	echo "date=$DATE"
	echo "started=$(date '+%F %T %Z')"
	echo "tag=$TAG"
	echo "quick=$QUICK"
	echo "runs=$RUNS"
	echo "scale=$SCALE"
	echo "seed=$SEED"
	echo "ins_scale=$([ "$INSTRUCTIONS" = 1 ] && echo "$INS_SCALE" || echo off)"
	echo "timeout=$RUN_TIMEOUT"
	cmd="bench/real_programs.sh"
	[ "$QUICK" = 1 ] && cmd+=" --quick"
	[ "$RUNS" != 5 ] && [ "$QUICK" = 0 ] && cmd+=" --runs $RUNS"
	[ "$SCALE" != 1 ] && [ "$QUICK" = 0 ] && cmd+=" --scale $SCALE"
	[ "$SEED" != 1 ] && cmd+=" --seed $SEED"
	[ -n "$ONLY_PROG" ] && cmd+=" --programs $ONLY_PROG"
	[ -n "$ONLY_ALLOC" ] && cmd+=" --allocators $ONLY_ALLOC"
	[ "$INSTRUCTIONS" = 0 ] && cmd+=" --no-instructions"
	echo "rerun=$cmd"
	bench_meta_common coreutils gawk jq libxml2-utils xsltproc gcc-12 git bash \
		perl python3.11 lua5.4 ruby3.1 g++-12 cppcheck graphviz groff-base
} >"$TMP/meta.txt"
{
	printf 'name\tmetric\tcommand\n'
	for p in "${PROGRAMS[@]}"; do
		line=${p#*|}
		line=${line#*|}
		line=${line//I\//IN/}
		line=${line//W\//WORK/}
		printf '%s\twall time\t%s\n' "${p%%|*}" "env LC_ALL=C TZ=UTC TMPDIR=WORK ${line//$ROOT\//}"
	done
} >"$TMP/programs.tsv"
bench_load_start

# ---- phase 5: the runs, interleaved ------------------------------------------------------
RAW=$TMP/raw.tsv
printf 'workload\tthreads\tallocator\trun\twall_s\tmaxrss_kib\tstatus\ttime_s\tload1\tsha256\n' >"$RAW"
n_alloc=${#ALLOCS[@]}
declare -A TIMED_OUT=() REF=() NRUNS=() DIFFERS=()
MISMATCH=0
WORK=$TMP/work
bench_log "runs=$RUNS scale=$SCALE allocators=$n_alloc programs=${#PROGRAMS[@]}"
for run in $(seq 1 "$RUNS"); do
	for p in "${PROGRAMS[@]}"; do
		name=${p%%|*}
		for i in $(seq 0 $((n_alloc - 1))); do
			a=${ALLOCS[$(((i + run) % n_alloc))]}
			aname=${a%%|*}
			load=$(cut -d' ' -f1 /proc/loadavg)
			if [ -n "${TIMED_OUT["$name $aname"]:-}" ]; then
				printf '%s\t1\t%s\t%s\tnan\t0\ttimeout-skipped\tnan\t%s\t-\n' "$name" "$aname" "$run" "$load" >>"$RAW"
				continue
			fi
			rm -rf "$WORK"
			mkdir -p "$WORK"
			cmd_of "$p" "$TMP/in" "$WORK"
			res=$(bench_run_one "${a#*|}" - "$WORK/stdout" "$RUN_TIMEOUT" "${CMD[@]}" 2>"$WORK/stderr")
			IFS=$'\t' read -r wall rss status <<<"$res"
			[ "$status" = timeout ] && TIMED_OUT["$name $aname"]=1
			h=-
			if [ "$status" = ok ]; then
				h=$(outputs_hash "$name" "$WORK/stdout" "$WORK")
				NRUNS[$name]=$((${NRUNS[$name]:-0} + 1))
				if [ -z "${REF[$name]:-}" ]; then
					REF[$name]=$h
				elif [ "$h" != "${REF[$name]}" ]; then
					status=output-differs
					MISMATCH=1
					DIFFERS[$name]+="$aname/run$run "
					cp "$WORK/stdout" "$TMP/differs-$name-$aname-$run.out"
					echo "bench/real_programs.sh: OUTPUT DIFFERS: $name under $aname (run $run): sha256 $h, first run ${REF[$name]}; kept in $TMP/differs-$name-$aname-$run.out" >&2
				fi
			else
				echo "bench/real_programs.sh: $name under $aname: $status: $(tail -1 "$WORK/stderr")" >&2
				cp "$WORK/stderr" "$TMP/failed-$name-$aname-$run.err"
			fi
			printf '%s\t1\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$aname" "$run" "$wall" "$rss" "$status" "$wall" "$load" "$h" >>"$RAW"
			bench_log "run $run/$RUNS $name $aname: $wall s, $rss KiB, $status"
		done
	done
done
{
	printf 'workload\toutputs\tsha256\truns\tdiffers\n'
	for p in "${PROGRAMS[@]}"; do
		name=${p%%|*}
		what=${p#*|}
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "${what%%|*}" "${REF[$name]:-none}" "${NRUNS[$name]:-0}" "${DIFFERS[$name]:-}"
	done
} >"$TMP/checks.tsv"

# ---- phase 6: instructions ----------------------------------------------------------------
# Once per program and allocator, on the smaller inputs: valgrind's
# cachegrind without cache simulation (~15 x slower than native; callgrind is
# ~5 x slower still), following every child process; the "I refs" of every
# process are added up.
if [ "$INSTRUCTIONS" = 1 ]; then
	CG=$TMP/instructions.tsv
	printf 'workload\tallocator\tinstructions\tstatus\n' >"$CG"
	for p in "${PROGRAMS[@]}"; do
		name=${p%%|*}
		for a in "${ALLOCS[@]}"; do
			aname=${a%%|*}
			rm -rf "$WORK" "$TMP/cg"
			mkdir -p "$WORK" "$TMP/cg"
			cmd_of "$p" "$TMP/in-ins" "$WORK"
			bench_valgrind_env "${a#*|}"
			st=ok
			"${BENCH_ENV[@]}" valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
				--cachegrind-out-file=/dev/null --log-file="$TMP/cg/%p.log" \
				"${CMD[@]}" </dev/null >"$WORK/stdout" 2>"$WORK/stderr" || st="exit:$?"
			ir=$(cat "$TMP"/cg/*.log 2>/dev/null | awk '/I *refs:/ { gsub(",", "", $NF); n += $NF } END { printf "%.0f", n }')
			[ "${ir:-0}" = 0 ] && { ir=nan; [ "$st" = ok ] && st=no-count; }
			if [ "$st" != ok ]; then
				mkdir -p "$TMP/failed-ins-$name-$aname"
				cp "$TMP"/cg/*.log "$WORK/stderr" "$TMP/failed-ins-$name-$aname/" 2>/dev/null || true
			fi
			printf '%s\t%s\t%s\t%s\n' "$name" "$aname" "$ir" "$st" >>"$CG"
			bench_log "instructions $name $aname: $ir ($st)"
		done
	done
fi

# ---- phase 7: report ------------------------------------------------------------------------
bench_load_stop
rm -rf "$WORK" "$TMP/cg"
echo "finished=$(date '+%F %T %Z')" >>"$TMP/meta.txt"
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$TMP/meta.txt"
"$PY" "$BENCH/report.py" --family --dir "$TMP" --out "$OUT/$DATE-$TAG"
bench_log "wrote $OUT/$DATE-$TAG.md (+ .png, .tsv)"
if [ "$MISMATCH" = 1 ]; then
	echo "bench/real_programs.sh: FAILED: some output differed between allocators (see 'Output check' in $OUT/$DATE-$TAG.md)" >&2
	exit 1
fi
