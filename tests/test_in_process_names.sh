#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# In-process profiles name the program's functions (issue 17, item 5):
# names_target (C++, -O2 -g, PIE) runs on libheapscope.so with
# HEAPSCOPE_PROFILE_AT_EXIT, once to a .pb.gz and once, with the same
# sampling seed (the same samples), to a folded file; exit_on_term.so turns
# SIGTERM into exit(0) so the profile is written.  Checked, against
# binutils and /proc/PID/maps read by this script while the target runs:
#  - app::Table::insert (not exported: absent from nm -D) and the static
#    keep_log (a local 't' symbol) are named, in pprof and in folded;
#  - every location of the program's mapping is named as nm's symbol
#    table names the function at that address;
#  - mapping 1 is the program under its real path with readelf -n's build
#    id; every mapping's start/limit/offset is an r-xp line of the maps and
#    its build id readelf's; every location address lies in its mapping;
#  - folded has one line per distinct stack, each the sum of the pprof
#    samples with that stack (pprof -raw's sample list summed by awk here).
#  - given the collector (HEAPSCOPE), `heapscope symbolize` adds what a
#    symbol table cannot give: the source lines, and the inlined
#    new_row as its own Line above insert, at the lines the source's
#    HS_LINE markers say.
# usage: test_in_process_names.sh LIB TARGET EXIT_SHIM [HEAPSCOPE]
# Exit 77 = skip (no go), a failure when CI=true.
set -u
LIB=$1 TARGET=$2 SHIM=$3 HEAPSCOPE=${4:-}

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
command -v go >/dev/null || skip "go (golang-go) not installed: go tool pprof"
for t in readelf nm c++filt; do
	command -v $t >/dev/null || skip "$t (binutils) not installed"
done
work=$(mktemp -d)
export HOME=$work GOCACHE=$work/gocache PPROF_TMPDIR=$work GOFLAGS=-mod=mod GOTOOLCHAIN=local
tpid=""
cleanup() {
	[ -n "$tpid" ] && kill -9 "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# What the test expects of the binary itself.
nm "$TARGET" | grep -q ' t _ZL8keep_logv$' || { echo "FAIL: $TARGET has no local keep_log"; exit 1; }
nm "$TARGET" | grep -q ' T _ZN3app5Table6insertEm$' || { echo "FAIL: no app::Table::insert"; exit 1; }
if nm -D "$TARGET" 2>/dev/null | grep -q 'Table6insert\|keep_log'; then
	echo "FAIL: $TARGET exports its functions (built -rdynamic?)"; exit 1
fi

run() { # out-path: the target to exit, its r-xp maps lines in $work/maps.$n
	local out=$1 n=$2
	env HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=11 \
		HEAPSCOPE_PROFILE_AT_EXIT="$out" LD_PRELOAD="$LIB $SHIM" \
		"$TARGET" >"$work/t$n.out" 2>"$work/t$n.err" &
	tpid=$!
	for _ in $(seq 1 200); do
		grep -q '^ready' "$work/t$n.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q '^ready' "$work/t$n.out" || { echo "FAIL: target not ready"; cat "$work/t$n.err"; exit 1; }
	awk '$2 == "r-xp" && $6 ~ /^\// { print $1, $3, $6 }' "/proc/$tpid/maps" >"$work/maps.$n"
	kill -TERM "$tpid"
	wait "$tpid" || { echo "FAIL: target exit status $?"; cat "$work/t$n.err"; exit 1; }
	tpid=""
	[ -s "$out" ] || { echo "FAIL: no profile at $out"; cat "$work/t$n.err"; exit 1; }
}
run "$work/heap.pb.gz" 1
run "$work/heap.folded" 2

go tool pprof -raw -symbolize=none "$work/heap.pb.gz" >"$work/raw.txt" 2>"$work/pprof.err" ||
	{ echo "FAIL: go tool pprof -raw"; cat "$work/pprof.err"; exit 1; }
sed -n '/^Locations/,$p' "$work/raw.txt"
echo "--- folded"
cat "$work/heap.folded"

# Mappings: "ID: 0xSTART/0xLIMIT/0xOFFSET FILE [BUILDID] [FN]..."
awk '/^Mappings/ { m = 1; next } m && /^[0-9]+:/ {
	split($2, r, "/"); sub(/:$/, "", $1)
	bid = ($4 ~ /^\[/ || $4 == "") ? "" : $4
	print $1, r[1], r[2], r[3], $3, bid }' "$work/raw.txt" >"$work/mappings"
real=$(readlink -f "$TARGET")
read -r id1 _ _ _ file1 bid1 <"$work/mappings"
[ "$id1" = 1 ] && [ "$file1" = "$real" ] || bad "mapping 1 is '$file1', not the program $real"
while read -r id start limit off file bid; do
	want=$(readelf -n "$file" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	[ -n "$bid" ] && [ "$bid" = "$want" ] || bad "mapping $id ($file): build id '$bid', readelf says '$want'"
	# maps: "start-limit offset path" (hex without 0x)
	line=$(printf '%x-%x %08x %s' "$start" "$limit" "$off" "$file")
	grep -qxF "$line" "$work/maps.1" || bad "mapping $id '$line' is no r-xp line of /proc/PID/maps"
done <"$work/mappings"

# Locations: "ID: 0xADDR M=N NAME FILE:LINE s=S(SYSTEM_NAME)": id addr
# mapping name-as-the-object-has-it, demangled by c++filt afterwards.
awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
	l && /^ +[0-9]+: 0x/ { sub(/:$/, "", $1); sub(/^M=/, "", $3)
		name = $4; if (match($0, /s=[0-9]+\(.*\)$/)) {
			name = substr($0, RSTART, RLENGTH); sub(/^s=[0-9]+\(/, "", name)
			sub(/\)$/, "", name) }
		print $1, $2, $3, name }' "$work/raw.txt" >"$work/locs"
[ -s "$work/locs" ] || bad "no locations"
read -r _ pstart _ poff _ <"$work/mappings"
delta=$(readelf -lW "$TARGET" | awk '$1 == "LOAD" && $(NF-1) ~ /E/ { print $3, $2; exit }')
read -r pvaddr poffset <<<"$delta"
# the program's functions: "start size name" (nm -S: hex, sized text symbols)
nm -S --defined-only "$TARGET" | awk '$3 ~ /^[tTwW]$/ && NF == 4 { print $1, $2, $4 }' >"$work/funcs"
while read -r lid addr mid name; do
	m=$(awk -v id="$mid" '$1 == id' "$work/mappings")
	[ -n "$m" ] || { bad "location $lid ($addr $name) has mapping $mid"; continue; }
	read -r _ start limit _ _ _ <<<"$m"
	((addr >= start && addr < limit)) || bad "location $lid $addr outside mapping $mid [$start, $limit)"
	[ "$mid" = 1 ] || continue
	vaddr=$((addr - pstart + poff + pvaddr - poffset))
	want=$(awk -v a=$vaddr '{ s = strtonum("0x" $1); z = strtonum("0x" $2)
		if (a >= s && a < s + z) { print $3; exit } }' "$work/funcs")
	[ -n "$want" ] && [ "$name" = "$want" ] || bad "location $lid $addr: '$name', nm says '$want'"
done <"$work/locs"
cut -d' ' -f4 "$work/locs" | grep -qx _ZL8keep_logv || bad "pprof does not name the static keep_log"
cut -d' ' -f4 "$work/locs" | grep -qx _ZN3app5Table6insertEm || bad "pprof does not name app::Table::insert"

# Folded vs the pprof samples: stack text (root first, names demangled
# by c++filt on both sides) -> summed inuse_space.
awk 'NR == FNR { name[$1] = $4; next }
	/^Samples/ { s = 1; next } /^Locations/ { s = 0 }
	s && /: [0-9 ]+$/ { split($0, a, ":"); split(a[1], v, " "); n = split(a[2], ids, " ")
		st = ""; for (i = n; i >= 1; i--) st = st (st == "" ? "" : ";") name[ids[i]]
		sum[st] += v[2] }
	END { for (st in sum) print st, sum[st] }' "$work/locs" "$work/raw.txt" |
	c++filt | sort >"$work/from_pprof"
c++filt <"$work/heap.folded" | sort >"$work/folded_sorted"
echo "--- pprof samples summed per stack"
cat "$work/from_pprof"
diff "$work/from_pprof" "$work/folded_sorted" >/dev/null ||
	bad "folded differs from the pprof samples summed per stack: $(diff "$work/from_pprof" "$work/folded_sorted")"
dups=$(sed 's/ [0-9-]*$//' "$work/heap.folded" | sort | uniq -d)
[ -z "$dups" ] || bad "folded repeats stacks: $dups"
grep -q ';_ZL8keep_logv \|;keep_log() ' "$work/heap.folded" || bad "folded does not name keep_log"
[ "$(wc -l <"$work/heap.folded")" -ge 2 ] || bad "folded has fewer than 2 stacks"
if [ -n "$HEAPSCOPE" ]; then
	src=$(dirname "$0")/programs/names_target.cpp
	l_row=$(grep -n 'HS_LINE:new_row_malloc' "$src" | cut -d: -f1)
	l_ins=$(grep -n 'HS_LINE:insert_call' "$src" | cut -d: -f1)
	"$HEAPSCOPE" symbolize "$work/heap.pb.gz" "$work/sym.pb.gz" 2>"$work/sym.err" ||
		bad "heapscope symbolize: $(cat "$work/sym.err")"
	cat "$work/sym.err"
	go tool pprof -raw -symbolize=none "$work/sym.pb.gz" >"$work/sym.txt" 2>/dev/null ||
		bad "go tool pprof -raw of the symbolized profile"
	# "N: 0xADDR M=1 new_row FILE:LINE ..." then the next Line of the
	# same location "insert FILE:LINE"
	awk -v r="names_target.cpp:$l_row" -v i="names_target.cpp:$l_ins" '
		/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
		l && /^ +[0-9]+: 0x/ { prev = ($0 ~ /new_row/ && index($0, r)) ; next }
		l && prev && /insert/ && index($0, i) { ok = 1 }
		{ prev = 0 } END { exit !ok }' "$work/sym.txt" ||
		bad "symbolize: no location with new_row at :$l_row inlined into insert at :$l_ins: $(sed -n '/^Locations/,/^Mappings/p' "$work/sym.txt")"
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
