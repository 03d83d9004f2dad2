#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inline frames, stripped binaries, debuginfod and offline symbolization
# end to end (issue 17, items 2-4; root, BPF).
# usage: test_dwarf.sh MODE HEAPSCOPE LIB TARGET SOURCE
# TARGET is names_target (C++, -O2 -g): app::Table::insert(unsigned long)
# allocates through app::detail::new_row(unsigned long), always_inline, and
# a static keep_log() allocates too.  The lines the profiles must name are
# found in SOURCE by their HS_LINE:<name> markers, not from DWARF.
# MODE:
#   inline     record of TARGET: folded has new_row as its own frame below
#              insert; pprof -raw has one Location with two Lines, new_row
#              at its malloc line then insert at its call of new_row;
#              pprof -top -lines marks new_row (inline)
#   stripped   stripped copies (strip + objcopy --only-keep-debug): one
#              with --add-gnu-debuglink and the debug file beside it, one
#              whose debug file is only in /usr/lib/debug/.build-id/ of the
#              target's own mount namespace (unshare -m, the recorder
#              outside it); both symbolize as TARGET does, also with a
#              FIFO planted at the build-id path; a copy with no debug file
#              anywhere does not
#   debuginfod a real elfutils debuginfod on 127.0.0.1 serving only the
#              debug file; the stripped copy is named with DEBUGINFOD_URLS,
#              not without; an unsymbolized profile of it symbolized by
#              `heapscope symbolize` after the copy is deleted
#   daemon     `heapscope daemon` names the inlined helper as record does
#              (pprof over HTTP); with --symbolize=none its profile has raw
#              addresses and build ids, which `heapscope symbolize` names;
#              also its host profile of names_target twice and python3,
#              all at the same addresses (setarch -R): each Location named
#              from its own process's object
#   offline    --symbolize=none leaves addresses, mappings and build ids
#              only; `heapscope symbolize` gives the same locations (names,
#              files, lines, inlined calls) as recording symbolized; bad
#              input and an existing OUT are refused
# pprof -raw runs with -symbolize=none: pprof's own symbolization (the
# mappings are exact) must not fill in what the profiles lack.
# Exit 77 = skip (not root / no BPF / no go / no debuginfod), a failure
# when CI=true.
set -u
MODE=$1 HEAPSCOPE=$2 LIB=$3 TARGET=$4 SRC=$5

. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF (run the tests as root)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
command -v go >/dev/null || skip "go (golang-go) not installed: go tool pprof"
export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local
# The host's debuginfod settings (libdebuginfod-common's profile.d) must
# not name what this test expects named from its own files.
unset DEBUGINFOD_URLS

line_of() { grep -n "HS_LINE:$1 " "$SRC" | cut -d: -f1; }
L_MALLOC=$(line_of new_row_malloc) L_CALL=$(line_of insert_call)
L_LOG=$(line_of keep_log) L_MAIN=$(line_of main_insert)
[ -n "$L_MALLOC" ] && [ -n "$L_CALL" ] && [ -n "$L_LOG" ] && [ -n "$L_MAIN" ] ||
	{ echo "FAIL: HS_LINE markers missing in $SRC"; exit 1; }
SRCBASE=$(basename "$SRC")
NEW_ROW='app::detail::new_row(unsigned long)'
INSERT='app::Table::insert(unsigned long)'

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# start NAME CMD...: run CMD (the target, preloaded) and wait for its
# "ready PID" line; sets tpid to the pid it prints (the target's own, also
# when CMD wraps it in unshare).
start() {
	local name=$1
	shift
	env HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=42 "$@" \
		>"$work/$name.out" 2>"$work/$name.err" &
	pids+=($!)
	for _ in $(seq 1 200); do
		grep -q '^ready' "$work/$name.out" 2>/dev/null && break
		sleep 0.05
	done
	tpid=$(awk '/^ready/ { print $2 }' "$work/$name.out")
	[ -n "$tpid" ] || { echo "FAIL: $name not ready"; cat "$work/$name.err"; exit 1; }
	pids+=("$tpid")
}

# record PID OUT [ARGS...]: a 1 s record (the live heap comes from the
# registry at attach).
record() {
	local pid=$1 out=$2
	shift 2
	"$HEAPSCOPE" record -p "$pid" -d 1 -o "$out" "$@" 2>"$out.err" ||
		{ echo "FAIL: record $*"; cat "$out.err"; exit 1; }
}

raw() { go tool pprof -symbolize=none -raw "$1" >"$1.raw" 2>"$1.perr" ||
	{ echo "FAIL: go tool pprof -raw $1"; cat "$1.perr"; exit 1; }; }

# check_folded FILE WHAT: new_row is a frame of its own under insert under
# main, and keep_log() under main, both with positive values.
check_folded() {
	awk -v a="$INSERT" -v b="$NEW_ROW" '{ v = $NF; $NF = ""; sub(/ +$/, "");
		n = split($0, fr, ";")
		if (n >= 3 && fr[n] == b && fr[n - 1] == a && fr[n - 2] == "main" && v > 0) ok1 = 1
		if (n >= 2 && fr[n] == "keep_log()" && fr[n - 1] == "main" && v > 0) ok2 = 1 }
		END { exit !(ok1 && ok2) }' "$1" ||
		{ bad "$2: folded has no ...;main;$INSERT;$NEW_ROW and ...;main;keep_log()"; cat "$1"; }
}

# count_inline RAW: how many Locations of `pprof -raw` output RAW have
# exactly two Lines, new_row at its malloc line (system name
# _ZN3app6detail7new_rowEm) then insert at its call (_ZN3app5Table6insertEm).
count_inline() {
	awk -v f="$SRCBASE" -v lm="$L_MALLOC" -v lc="$L_CALL" -v nr="$NEW_ROW" -v ins="$INSERT" '
		/^Locations/ { on = 1; next } /^Mappings/ { if (cur == 2 && good) found++; on = 0; cur = 0 }
		!on { next }
		/^ +[0-9]+: 0x/ { if (cur == 2 && good) found++
			cur = 0; good = 0
			if (index($0, " " nr " ") && index($0, f ":" lm " ") &&
			    $0 ~ /\(_ZN3app6detail7new_rowEm\)$/) { cur = 1; good = 1 }
			next }
		cur == 1 { cur = 2
			if (!(index($0, ins " ") && index($0, f ":" lc " ") &&
			      $0 ~ /\(_ZN3app5Table6insertEm\)$/)) good = 0
			next }
		cur == 2 { good = 0 }
		END { if (cur == 2 && good) found++; print found + 0 }' "$1"
}

# check_pprof FILE WHAT: -raw has such a Location (count_inline);
# keep_log() and main at their lines.
check_pprof() {
	raw "$1"
	[ "$(count_inline "$1.raw")" -ge 1 ] ||
		bad "$2: no Location with Lines $NEW_ROW $SRCBASE:$L_MALLOC then $INSERT $SRCBASE:$L_CALL"
	grep -qE " keep_log\(\) [^ ]*$SRCBASE:$L_LOG s=[0-9]+\(_ZL8keep_logv\)\$" "$1.raw" ||
		bad "$2: no keep_log() at $SRCBASE:$L_LOG (system name _ZL8keep_logv)"
	grep -qE " main [^ ]*$SRCBASE:$L_MAIN s=[0-9]+\$" "$1.raw" ||
		bad "$2: no main at $SRCBASE:$L_MAIN"
	[ $fail -eq 0 ] || sed -n '/^Locations/,$p' "$1.raw"
}

# A stripped copy of TARGET and its debug file (same build id).
make_stripped() { # OUT
	strip -s "$TARGET" -o "$1" || exit 1
	if readelf -SW "$1" | grep -qE ' \.(symtab|debug_info) '; then
		echo "FAIL: $1 still has symbols or DWARF"; exit 1
	fi
}
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }

case $MODE in
inline)
	start t env LD_PRELOAD="$LIB" "$TARGET"
	record "$tpid" "$work/heap.folded"
	record "$tpid" "$work/heap.pb.gz" --format pprof
	check_folded "$work/heap.folded" "record"
	check_pprof "$work/heap.pb.gz" "record"
	go tool pprof -symbolize=none -top -lines "$work/heap.pb.gz" >"$work/top.txt" 2>/dev/null
	grep -qE "$(printf '%s' "$NEW_ROW" | sed 's/[()]/\\&/g') [^ ]*$SRCBASE:$L_MALLOC \(inline\)\$" "$work/top.txt" ||
		{ bad "pprof -top -lines: no '$NEW_ROW $SRCBASE:$L_MALLOC (inline)'"; cat "$work/top.txt"; }
	;;
stripped)
	objcopy --only-keep-debug "$TARGET" "$work/names.debug" || exit 1
	bid=$(build_id "$TARGET")
	[ ${#bid} -ge 4 ] || { echo "FAIL: $TARGET has no build id"; exit 1; }
	# 1. .gnu_debuglink, the debug file beside the binary
	mkdir -p "$work/dl"
	make_stripped "$work/dl/names_dl"
	cp "$work/names.debug" "$work/dl/names_dl.debug"
	objcopy --add-gnu-debuglink="$work/dl/names_dl.debug" "$work/dl/names_dl" || exit 1
	start dl env LD_PRELOAD="$LIB" "$work/dl/names_dl"
	record "$tpid" "$work/dl.folded"
	record "$tpid" "$work/dl.pb.gz" --format pprof
	check_folded "$work/dl.folded" "debuglink"
	check_pprof "$work/dl.pb.gz" "debuglink"
	# 2. /usr/lib/debug/.build-id/xx/yyyy.debug in the target's mount
	# namespace only (a bind mount private to it); recorded from outside
	mkdir -p "$work/bidroot/.build-id/${bid:0:2}" "$work/bid"
	cp "$work/names.debug" "$work/bidroot/.build-id/${bid:0:2}/${bid:2}.debug"
	make_stripped "$work/bid/names_bid"
	[ -d /usr/lib/debug ] || mkdir -p /usr/lib/debug
	[ ! -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] ||
		{ echo "FAIL: the host has a debug file for $bid already"; exit 1; }
	start bid unshare -m --propagation private sh -c \
		'mount --bind "$0" /usr/lib/debug && exec env LD_PRELOAD="$1" "$2"' \
		"$work/bidroot" "$LIB" "$work/bid/names_bid"
	record "$tpid" "$work/bid.folded"
	record "$tpid" "$work/bid.pb.gz" --format pprof
	check_folded "$work/bid.folded" "build-id dir"
	check_pprof "$work/bid.pb.gz" "build-id dir"
	# 2b. a FIFO where the build-id file would be (a hostile container):
	# not waited on; the debuglink beside the binary names it
	mkdir -p "$work/fiforoot/.build-id/${bid:0:2}" "$work/fifo"
	mkfifo "$work/fiforoot/.build-id/${bid:0:2}/${bid:2}.debug"
	make_stripped "$work/fifo/names_fifo"
	cp "$work/names.debug" "$work/fifo/names_fifo.debug"
	objcopy --add-gnu-debuglink="$work/fifo/names_fifo.debug" "$work/fifo/names_fifo" || exit 1
	start fifo unshare -m --propagation private sh -c \
		'mount --bind "$0" /usr/lib/debug && exec env LD_PRELOAD="$1" "$2"' \
		"$work/fiforoot" "$LIB" "$work/fifo/names_fifo"
	timeout 60 "$HEAPSCOPE" record -p "$tpid" -d 1 -o "$work/fifo.folded" 2>"$work/fifo.err" ||
		{ bad "record with a FIFO for a debug file (exit $?)"; cat "$work/fifo.err"; }
	check_folded "$work/fifo.folded" "FIFO at the build-id path"
	# 3. control: no debug file anywhere, no names of the program's own
	mkdir -p "$work/none"
	make_stripped "$work/none/names_none"
	start none env LD_PRELOAD="$LIB" "$work/none/names_none"
	record "$tpid" "$work/none.folded"
	if grep -qE 'new_row|keep_log|Table::insert' "$work/none.folded"; then
		bad "a stripped copy without debug info was named: the test names nothing"
	fi
	grep -q 'names_none+0x' "$work/none.folded" ||
		bad "the stripped copy's frames are not names_none+0xOFF"
	;;
debuginfod)
	command -v debuginfod >/dev/null || skip "no debuginfod (Debian package debuginfod)"
	mkdir -p "$work/srv" "$work/run" "$work/cache" "$work/cache2"
	objcopy --only-keep-debug "$TARGET" "$work/srv/names.debug" || exit 1
	bid=$(build_id "$TARGET")
	make_stripped "$work/run/names_stripped"
	port=""
	for try in 1 2 3 4 5; do
		p=$((20000 + (RANDOM % 20000)))
		debuginfod -F -p "$p" -d "$work/db.sqlite" -t 0 -g 0 "$work/srv" \
			>"$work/debuginfod.log" 2>&1 &
		dpid=$!
		pids+=("$dpid")
		for _ in $(seq 1 100); do
			code=$(curl -s -o /dev/null -w '%{http_code}' \
				"http://127.0.0.1:$p/buildid/$bid/debuginfo")
			[ "$code" = 200 ] && break
			kill -0 "$dpid" 2>/dev/null || break
			sleep 0.2
		done
		[ "${code:-}" = 200 ] && { port=$p; break; }
		kill "$dpid" 2>/dev/null
		rm -f "$work/db.sqlite"
	done
	[ -n "$port" ] || { echo "FAIL: debuginfod did not serve $bid"; cat "$work/debuginfod.log"; exit 1; }
	echo "debuginfod on 127.0.0.1:$port serves $bid"
	start s env LD_PRELOAD="$LIB" "$work/run/names_stripped"
	record "$tpid" "$work/plain.folded"
	grep -qE 'new_row|keep_log' "$work/plain.folded" &&
		bad "named without DEBUGINFOD_URLS: the test names nothing"
	export DEBUGINFOD_CACHE_PATH=$work/cache
	DEBUGINFOD_URLS=http://127.0.0.1:$port record "$tpid" "$work/d.folded"
	DEBUGINFOD_URLS=http://127.0.0.1:$port record "$tpid" "$work/d.pb.gz" --format pprof
	check_folded "$work/d.folded" "debuginfod"
	check_pprof "$work/d.pb.gz" "debuginfod"
	[ -s "$work/cache/$bid/debuginfo" ] || bad "nothing in DEBUGINFOD_CACHE_PATH for $bid"
	grep -q "GET /buildid/$bid/debuginfo 200" "$work/debuginfod.log" ||
		bad "debuginfod's log has no GET of $bid"
	# offline, the binary gone: heapscope symbolize asks debuginfod
	record "$tpid" "$work/raw.pb.gz" --format pprof --symbolize=none
	kill "$tpid"
	wait "$tpid" 2>/dev/null
	rm -f "$work/run/names_stripped"
	DEBUGINFOD_CACHE_PATH=$work/cache2 DEBUGINFOD_URLS=http://127.0.0.1:$port \
		"$HEAPSCOPE" symbolize "$work/raw.pb.gz" "$work/sym.pb.gz" 2>"$work/sym.err" ||
		{ bad "heapscope symbolize"; cat "$work/sym.err"; }
	cat "$work/sym.err"
	check_pprof "$work/sym.pb.gz" "symbolize via debuginfod"
	[ -s "$work/cache2/$bid/debuginfo" ] || bad "symbolize did not fetch $bid"
	;;
offline)
	start t env LD_PRELOAD="$LIB" "$TARGET"
	record "$tpid" "$work/local.pb.gz" --format pprof
	record "$tpid" "$work/raw.pb.gz" --format pprof --symbolize=none
	record "$tpid" "$work/raw.folded" --symbolize=none
	check_pprof "$work/local.pb.gz" "local"
	raw "$work/raw.pb.gz"
	# no Lines at all; every mapping of the target's binary with its build id
	if sed -n '/^Locations/,/^Mappings/p' "$work/raw.pb.gz.raw" | grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ .*[^ ]'; then
		bad "--symbolize=none: locations have lines"
	fi
	grep -qE "^[0-9]+: 0x.* $TARGET $(build_id "$TARGET")" "$work/raw.pb.gz.raw" ||
		bad "--symbolize=none: no mapping of $TARGET with build id $(build_id "$TARGET")"
	grep -q "$(basename "$TARGET")+0x" "$work/raw.folded" ||
		bad "--symbolize=none folded: no $(basename "$TARGET")+0xOFF frames"
	grep -q 'new_row\|keep_log' "$work/raw.folded" &&
		bad "--symbolize=none folded has names"
	"$HEAPSCOPE" symbolize "$work/raw.pb.gz" "$work/sym.pb.gz" 2>"$work/sym.err" ||
		{ bad "heapscope symbolize"; cat "$work/sym.err"; }
	cat "$work/sym.err"
	check_pprof "$work/sym.pb.gz" "symbolize"
	# the same locations as symbolized at record time: address, names,
	# files, lines (location ids and string indices aside)
	raw "$work/local.pb.gz"
	raw "$work/sym.pb.gz"
	norm() { sed -n '/^Locations/,/^Mappings/p' "$1" | sed -E 's/^ +[0-9]+: //; s/ s=[0-9]+/ s=/' | sort; }
	norm "$work/local.pb.gz.raw" >"$work/a.txt"
	norm "$work/sym.pb.gz.raw" >"$work/b.txt"
	diff "$work/a.txt" "$work/b.txt" >"$work/diff.txt" ||
		{ bad "symbolize offline differs from symbolizing at record"; cat "$work/diff.txt"; }
	# bad input: one line, nothing written
	printf 'not a profile' >"$work/junk"
	if "$HEAPSCOPE" symbolize "$work/junk" "$work/junk.out" 2>"$work/junk.err"; then
		bad "symbolize accepted junk"
	fi
	grep -q "not a valid pprof profile" "$work/junk.err" || bad "junk: $(cat "$work/junk.err")"
	[ ! -e "$work/junk.out" ] || bad "junk: an output was written"
	# truncated gzip
	head -c 200 "$work/raw.pb.gz" >"$work/trunc.pb.gz"
	"$HEAPSCOPE" symbolize "$work/trunc.pb.gz" "$work/trunc.out" 2>/dev/null &&
		bad "symbolize accepted a truncated profile"
	# an existing OUT is kept without --force
	cp "$work/junk" "$work/keep"
	"$HEAPSCOPE" symbolize "$work/raw.pb.gz" "$work/keep" 2>"$work/keep.err" &&
		bad "symbolize replaced an existing OUT without --force"
	cmp -s "$work/junk" "$work/keep" || bad "existing OUT changed"
	"$HEAPSCOPE" symbolize --force "$work/raw.pb.gz" "$work/keep" 2>/dev/null ||
		bad "symbolize --force"
	"$HEAPSCOPE" record -p "$tpid" --symbolize=bogus >/dev/null 2>"$work/opt.err"
	[ $? -eq 2 ] && grep -q "local or none" "$work/opt.err" ||
		bad "record --symbolize=bogus: $(cat "$work/opt.err")"
	;;
daemon)
	hs_need_cmd curl curl
	# A private copy of the library, the daemon's only --lib (with
	# --no-copies): it follows this test's processes, not the other
	# tests' that preload the build tree's library meanwhile.
	cp "$LIB" "$work/libheapscope-dwarf.so" || exit 1
	LIB=$work/libheapscope-dwarf.so
	start t env LD_PRELOAD="$LIB" "$TARGET"
	# daemon ARGS...: a daemon on a free port following only LIB; sets
	# url once it lists the target
	daemon() {
		hs_start_daemon "$work/daemon.err" --lib "$LIB" --no-copies "$@"
		pids+=("$dpid")
		url=$URL
		for _ in $(seq 1 100); do
			curl -sf -m 10 "$url/processes" | grep -q "\"pid\": *$tpid[,}]" && return
			sleep 0.1
		done
		echo "FAIL: the daemon does not follow $tpid"; curl -s "$url/processes"; exit 1
	}
	stop_daemon() { kill "$dpid"; wait "$dpid" 2>/dev/null; }
	daemon
	curl -sf -m 120 -o "$work/d.pb.gz" "$url/debug/pprof/heap?pid=$tpid" || bad "scrape"
	curl -sf -m 120 -o "$work/d.folded" "$url/debug/pprof/heap?pid=$tpid&format=folded" || bad "folded scrape"
	stop_daemon
	check_folded "$work/d.folded" "daemon"
	check_pprof "$work/d.pb.gz" "daemon"
	daemon --symbolize=none
	curl -sf -m 120 -o "$work/raw.pb.gz" "$url/debug/pprof/heap?pid=$tpid" || bad "scrape (none)"
	stop_daemon
	raw "$work/raw.pb.gz"
	if sed -n '/^Locations/,/^Mappings/p' "$work/raw.pb.gz.raw" | grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ .*[^ ]'; then
		bad "daemon --symbolize=none: locations have lines"
	fi
	grep -qE "^[0-9]+: 0x.* $TARGET $(build_id "$TARGET")" "$work/raw.pb.gz.raw" ||
		bad "daemon --symbolize=none: no mapping of $TARGET with its build id"
	"$HEAPSCOPE" symbolize "$work/raw.pb.gz" "$work/sym.pb.gz" 2>"$work/sym.err" ||
		{ bad "heapscope symbolize"; cat "$work/sym.err"; }
	check_pprof "$work/sym.pb.gz" "daemon --symbolize=none + symbolize"
	# the host profile of processes at the same addresses (ASLR off):
	# two names_target and python3, a different PIE mapped at the same
	# place; each Location must be symbolized in its own process's object
	start t2 setarch -R env LD_PRELOAD="$LIB" "$TARGET"
	t2=$tpid
	start py setarch -R env LD_PRELOAD="$LIB" python3 -c \
		'import os, time; keep = [bytearray(70000) for _ in range(400)]; print("ready", os.getpid(), flush=True); time.sleep(600)'
	py=$tpid
	start t3 setarch -R env LD_PRELOAD="$LIB" "$TARGET"
	a2=$(awk -v f="$TARGET" '$NF == f { print $1; exit }' /proc/$t2/maps)
	a3=$(awk -v f="$TARGET" '$NF == f { print $1; exit }' /proc/$tpid/maps)
	ap=$(awk '$NF ~ /python3/ { print $1; exit }' /proc/$py/maps)
	[ -n "$a2" ] && [ "$a2" = "$a3" ] && [ "${ap%%-*}" = "${a2%%-*}" ] ||
		skip "setarch -R did not place the binaries at one address ($a2, $a3, $ap)"
	daemon --symbolize=none
	for p in $t2 $py; do
		for _ in $(seq 1 100); do
			curl -sf -m 10 "$url/processes" | grep -q "\"pid\": *$p[,}]" && break
			sleep 0.1
		done
	done
	curl -sf -m 120 -o "$work/host.pb.gz" "$url/debug/pprof/heap" || bad "host scrape (none)"
	stop_daemon
	timeout 120 "$HEAPSCOPE" symbolize "$work/host.pb.gz" "$work/host.sym.pb.gz" 2>"$work/hsym.err" ||
		{ bad "heapscope symbolize (host)"; cat "$work/hsym.err"; }
	raw "$work/host.sym.pb.gz"
	[ "$(count_inline "$work/host.sym.pb.gz.raw")" -ge 1 ] ||
		bad "host profile: no Location with the inlined helper's two Lines"
	# python3's locations (its mapping ids) named after names_target's
	# functions would be addresses looked up in the wrong process's object
	pyids=$(sed -n '/^Mappings/,$p' "$work/host.sym.pb.gz.raw" |
		awk '$0 ~ /python3/ { sub(/:$/, "", $1); print $1 }')
	[ -n "$pyids" ] || bad "host profile: no python3 mapping"
	for id in $pyids; do
		if sed -n '/^Locations/,/^Mappings/p' "$work/host.sym.pb.gz.raw" |
			grep -E " M=$id " | grep -qE 'new_row|keep_log|Table::insert|names_target\.cpp'; then
			bad "host profile: python3's addresses named from names_target"
		fi
	done
	grep -q "pid:\[$py\]" "$work/host.sym.pb.gz.raw" || bad "host profile: no samples of python3 ($py)"
	[ $fail -eq 0 ] || sed -n '/^Locations/,$p' "$work/host.sym.pb.gz.raw"
	"$HEAPSCOPE" daemon --symbolize=remote >/dev/null 2>"$work/opt.err"
	[ $? -eq 2 ] && grep -q "local or none" "$work/opt.err" ||
		bad "daemon --symbolize=remote: $(cat "$work/opt.err")"
	;;
*)
	echo "usage: test_dwarf.sh inline|stripped|debuginfod|daemon|offline HEAPSCOPE LIB TARGET SOURCE"
	exit 2
	;;
esac
[ $fail -eq 0 ] && echo "PASS ($MODE)"
exit $fail
