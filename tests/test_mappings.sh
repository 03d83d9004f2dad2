#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exact pprof mappings from the collector (issue 17, item 3; root, BPF):
#   test_mappings.sh MODE HEAPSCOPE LIB TARGET NEW_TARGET
# MODE record: `heapscope record -p PID --format pprof`; MODE daemon: a
# private `heapscope daemon --lib LIB` scraped at /debug/pprof/heap and
# /debug/pprof/allocs.  TARGET (names_target: C++, -O2 -g, PIE) runs on
# LIB twice: as built, and as a copy in a temporary directory that is
# deleted while it runs (pprof -raw -symbolize=none: what the profile
# holds, not what pprof would add).  NEW_TARGET (new_target) allocates through
# libstdc++'s operator new and libc's strdup: the innermost frames are in
# libraries, the program must still be mapping 1.  In every profile (read with go tool pprof -raw),
# against /proc/PID/maps read by this script while the target runs and
# against readelf:
#  - mapping 1 is the program (the copy's name without " (deleted)");
#  - every mapping's start/limit/offset is an r-xp line of the maps, and
#    its build id is readelf -n's of that file (the copy: of the original);
#  - every location's address lies inside its mapping;
#  - the program's functions are named (app::Table::insert; new_target's
#    main), also when its file is deleted.
# Exit 77 = skip (not root / no BPF / no go / no curl), a failure when
# CI=true.
set -u
MODE=$1 HEAPSCOPE=$2 LIB=$3 TARGET=$4 NEW_TARGET=$5

. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
command -v go >/dev/null || skip "go (golang-go) not installed: go tool pprof"
command -v readelf >/dev/null || skip "readelf (binutils) not installed"
[ "$MODE" != daemon ] || hs_need_cmd curl curl

work=$(mktemp -d)
export HOME=$work GOCACHE=$work/gocache PPROF_TMPDIR=$work GOFLAGS=-mod=mod GOTOOLCHAIN=local
tpids=() dpid=""
cleanup() {
	for p in "${tpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

start_target() { # binary name: sets tpid, $work/maps.NAME (r-xp lines)
	env HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=5 LD_PRELOAD="$LIB" \
		"$1" >"$work/$2.out" 2>"$work/$2.err" &
	tpid=$!
	tpids+=("$tpid")
	for _ in $(seq 1 200); do
		grep -q '^ready' "$work/$2.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q '^ready' "$work/$2.out" || { echo "FAIL: target not ready"; cat "$work/$2.err"; exit 1; }
}
save_maps() { # pid name: "start-limit offset path" of the file-backed r-xp lines
	awk '$2 == "r-xp" && $6 ~ /^\// { p = $6; for (i = 7; i <= NF; i++) p = p " " $i
		print $1, $3, p }' "/proc/$1/maps" >"$work/maps.$2"
}

# check PROFILE NAME PROGRAM BUILDID_FILE FUNCTION: the profile of one
# target, FUNCTION one of its functions that must be named
check() {
	local prof=$1 name=$2 prog=$3 idfile=$4 func=$5
	local raw=$work/$name.raw
	echo "--- $name: ${prof##*/}"
	go tool pprof -raw -symbolize=none "$prof" >"$raw" 2>"$work/pprof.err" ||
		{ bad "$name: go tool pprof -raw: $(cat "$work/pprof.err")"; return; }
	sed -n '/^Mappings/,$p' "$raw"
	# "ID: 0xSTART/0xLIMIT/0xOFFSET FILE [BUILDID] [FN]..."
	awk '/^Mappings/ { m = 1; next } m && /^[0-9]+:/ {
		split($2, r, "/"); sub(/:$/, "", $1)
		bid = ($4 ~ /^\[/ || $4 == "") ? "" : $4
		print $1, r[1], r[2], r[3], $3, bid }' "$raw" >"$work/$name.maps"
	local id1 file1
	read -r id1 _ _ _ file1 _ <"$work/$name.maps"
	[ "${id1:-}" = 1 ] && [ "${file1:-}" = "$prog" ] ||
		bad "$name: mapping 1 is '${file1:-none}', not the program $prog"
	grep -q '(deleted)' "$work/$name.maps" && bad "$name: a mapping is named '... (deleted)'"
	local id start limit off file bid want line
	while read -r id start limit off file bid; do
		if [ "$file" = "$prog" ]; then
			want=$(readelf -n "$idfile" | awk '/Build ID:/ { print $3; exit }')
		else
			want=$(readelf -n "$file" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
		fi
		[ -n "$bid" ] && [ "$bid" = "$want" ] ||
			bad "$name: mapping $id ($file): build id '$bid', readelf -n says '$want'"
		line=$(printf '%x-%x %08x %s' "$start" "$limit" "$off" "$file")
		grep -qxF "$line" "$work/maps.$name" ||
			grep -qxF "$line (deleted)" "$work/maps.$name" ||
			bad "$name: mapping $id '$line' is no r-xp line of /proc/PID/maps"
	done <"$work/$name.maps"
	# "   ID: 0xADDR M=N NAME ...": every location inside its mapping
	local nloc=0 lid addr mid m
	while read -r lid addr mid; do
		nloc=$((nloc + 1))
		m=$(awk -v id="$mid" '$1 == id' "$work/$name.maps")
		[ -n "$m" ] || { bad "$name: location $lid ($addr) has no mapping (M=$mid)"; continue; }
		read -r _ start limit _ <<<"$m"
		((addr >= start && addr < limit)) ||
			bad "$name: location $lid $addr outside mapping $mid [$start, $limit)"
	done < <(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
		l && /^ +[0-9]+: 0x/ { sub(/:$/, "", $1); sub(/^M=/, "", $3); print $1, $2, $3 }' "$raw")
	[ $nloc -gt 0 ] || bad "$name: no locations"
	# on any Line of a location of mapping 1 (inlined calls come first)
	awk -v f="$func" '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
		l { line = $0
			if (line ~ /^ +[0-9]+: 0x/) {
				m = $3; sub(/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ /, "", line)
			} else sub(/^ +/, "", line)
			if (m == "M=1" && index(line, f) == 1 &&
			    substr(line, length(f) + 1, 1) ~ /[ (]/) ok = 1 }
		END { exit !ok }' "$raw" || bad "$name: $func is not named in mapping 1"
}

start_daemon() { hs_start_daemon "$work/daemon.err" --lib "$LIB" --no-copies; }

profile() { # pid name: $work/NAME.*.pb.gz, the profiles of this mode
	if [ "$MODE" = record ]; then
		"$HEAPSCOPE" record -p "$1" -d 1 --format pprof -o "$work/$2.heap.pb.gz" \
			2>"$work/$2.rec.err" || { bad "$2: record: $(cat "$work/$2.rec.err")"; return 1; }
		return 0
	fi
	local k
	for k in heap allocs; do
		for _ in $(seq 1 100); do # the daemon attaches within its scan period
			curl -sf -o "$work/$2.$k.pb.gz" "$URL/debug/pprof/$k?pid=$1" && break
			sleep 0.1
		done
		[ -s "$work/$2.$k.pb.gz" ] || { bad "$2: no $k profile from the daemon"; return 1; }
	done
}

prog=$(readlink -f "$TARGET")
mkdir "$work/del"
cp "$TARGET" "$work/del/names_copy"
copy=$(readlink -f "$work/del/names_copy")

start_target "$prog" built
built=$tpid
save_maps "$built" built
start_target "$copy" deleted
deleted=$tpid
save_maps "$deleted" deleted
newprog=$(readlink -f "$NEW_TARGET")
start_target "$newprog" new
new=$tpid
save_maps "$new" new
cp "$copy" "$work/copy_ids" # readelf reads the original bytes from here
rm -f "$copy"
grep -q "$copy (deleted)" "/proc/$deleted/maps" || bad "the copy is not shown deleted"
[ "$MODE" = daemon ] && start_daemon

for t in built deleted new; do
	pid=${!t}
	want=$prog idf=$prog func=app::Table::insert
	[ $t = deleted ] && want=$copy idf=$work/copy_ids
	[ $t = new ] && want=$newprog idf=$newprog func=main
	profile "$pid" "$t" || continue
	for f in "$work/$t".*.pb.gz; do
		check "$f" "$t" "$want" "$idf" "$func"
	done
done
[ $fail -eq 0 ] && echo PASS
exit $fail
