#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_cli_errors.sh HEAPSCOPE - every bad command line of every
# subcommand (issue 14 item 8) gets one line saying what is wrong and what
# is accepted, "heapscope CMD: ...", then the hint "try 'heapscope CMD
# --help'", exit status 2; a command that cannot run (vanished pid, no
# permission, not root) gets one line and exit status 1.  Nothing on
# stdout.  A table of invocations: each row's exit status and key words
# (fixed strings, all in the first line) are checked.  Rows that need
# root (a live pid of another user, user nobody) run only as root.
set -u
HEAPSCOPE=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 rows=0
PIDMAX=$(($(cat /proc/sys/kernel/pid_max) - 1))
PIDS="1..$PIDMAX"
BYTES="1..1099511627776"

# row STATUS 'KEY;WORDS' ARGS...: run heapscope ARGS (under $AS, if set)
row() {
	local want=$1 words=$2 rc cmd n w
	shift 2
	rows=$((rows + 1))
	${AS:-} "$HEAPSCOPE" "$@" >"$work/out" 2>"$work/err" </dev/null
	rc=$?
	# the subcommand: "record", "daemon", "rate", "leaks" or none
	case ${1:-} in record | daemon | rate | leaks) cmd=" $1" ;; *) cmd="" ;; esac
	n=$(wc -l <"$work/err")
	local what="heapscope $*${AS:+ (as $AS)}"
	if [ $rc -ne "$want" ]; then
		echo "FAIL: $what: exit $rc (want $want): $(cat "$work/err")"
		failed=1
		return
	fi
	if [ -s "$work/out" ]; then
		echo "FAIL: $what: wrote to stdout: $(head -3 "$work/out")"
		failed=1
		return
	fi
	if [ "$want" -eq 2 ]; then
		if [ "$n" -ne 2 ] || [ "$(sed -n 2p "$work/err")" != "try 'heapscope$cmd --help'" ]; then
			echo "FAIL: $what: want one line and the hint, got $n lines:"
			cat "$work/err"
			failed=1
			return
		fi
	elif [ "$n" -ne 1 ]; then
		echo "FAIL: $what: want one line, got $n:"
		cat "$work/err"
		failed=1
		return
	fi
	if ! head -1 "$work/err" | grep -q "^heapscope$cmd: "; then
		echo "FAIL: $what: does not start with 'heapscope$cmd: ': $(head -1 "$work/err")"
		failed=1
		return
	fi
	IFS=';' read -ra ws <<<"$words"
	for w in "${ws[@]}"; do
		if ! head -1 "$work/err" | grep -qF -- "$w"; then
			echo "FAIL: $what: no '$w' in: $(head -1 "$work/err")"
			failed=1
			return
		fi
	done
	echo "ok: [$rc] $what: $(head -1 "$work/err")"
}

# a pid that was alive and is not any more
sh -c 'exit 0' &
gone=$!
wait $gone

# no command, unknown command
row 2 "no command;record, daemon, rate, rss, leaks or symbolize"
row 2 "unknown command 'frobnicate';record, daemon, rate, rss, leaks or symbolize" frobnicate
row 2 "unknown command 'a?b'" $'a\nb'

# record
row 2 "-p PID is required;$PIDS" record
for p in abc 0 -5 12x 1.5 "" $((PIDMAX + 1)) 99999999999999999999; do
	row 2 "invalid pid '$p';$PIDS" record -p "$p"
done
row 2 "invalid pid '1?2';$PIDS" record -p $'1\n2'
row 2 "option '-p' needs a value;$PIDS" record -p
row 2 "option '--pid' needs a value;$PIDS" record --pid
for d in abc 0 -1 31536001 1s; do
	row 2 "invalid duration '$d';1..31536000" record -p 1 -d "$d"
done
row 2 "option '-d' needs a value;1..31536000" record -p 1 -d
row 2 "invalid --value 'bogus';inuse, requested, objects;fragmentation_age" \
	record -p 1 --value bogus
row 2 "invalid --profile 'x';heap, allocs, lifetime, peak or fragmentation" \
	record -p 1 --profile x
row 2 "invalid --format 'xml';folded, pprof or text" record -p 1 --format xml
row 2 "option '--format' needs a value;folded, pprof or text" record -p 1 --format
row 2 "invalid --provider 'x';auto, heapscope, otel_memory or ddheap" \
	record -p 1 --provider x
row 2 "invalid --output ''" record -p 1 -o ""
row 2 "invalid --lib ''" record -p 1 --lib ""
row 2 "unknown option '--bogus'" record -p 1 --bogus
row 2 "unknown option '--bogus'" record -p 1 --bogus=3
row 2 "unknown option '-Z'" record -p 1 -Z
row 2 "unknown option '-Z'" record -vZ -p 1
row 2 "option '--force' takes no value" record -p 1 --force=yes
row 2 "unexpected argument 'extra'" record -p 1 extra

# rate
row 2 "-p PID is required;$PIDS" rate 1M
row 2 "missing BYTES;$BYTES;off" rate -p 1
for b in abc 2T 1025G 1099511627777 -5 1.5M 1MB " 1M" K; do
	row 2 "invalid BYTES '$b';$BYTES;K, M or G;off" rate -p 1 -- "$b"
done
row 2 "unknown option '-5'" rate -p 1 -5
row 2 "unexpected argument '2M'" rate -p 1 1M 2M
row 2 "invalid pid 'abc';$PIDS" rate -p abc 1M
row 2 "invalid pid '0';$PIDS" rate -p 0 1M
for w in x -1 3601 1e3; do
	row 2 "invalid --wait '$w';0..3600" rate -p 1 --wait "$w" 1M
done
row 2 "option '--wait' needs a value;0..3600" rate -p 1 1M --wait
row 2 "option '--lib' needs a value" rate -p 1 1M --lib
row 2 "unknown option '--period'" rate -p 1 --period 1M
row 1 "no process $gone" rate -p $gone 1M

# leaks (a pid gone: tests/test_leaks.sh, as it needs root first)
row 2 "-p PID is required;$PIDS" leaks -d 5
for d in 0 1 86401 x; do
	row 2 "invalid duration '$d';2..86400" leaks -p 1 -d "$d"
done
for i in 0 3601 x; do
	row 2 "invalid --interval '$i';1..3600" leaks -p 1 --interval "$i"
done
row 2 "invalid pid 'abc';$PIDS" leaks -p abc
row 2 "option '--lib' needs a value" leaks -p 1 --lib
row 2 "unknown option '--bogus'" leaks -p 1 --bogus
row 2 "unexpected argument 'extra'" leaks -p 1 extra
for i in -1 3601 x; do
	row 2 "invalid --leak-interval '$i';0..3600" daemon --leak-interval "$i"
done

# daemon
for l in foo 127.0.0.1 127.0.0.1: 127.0.0.1:65536 127.0.0.1:-1 127.0.0.1:x \
	[::1]:x 300.1.1.1:80 unix: unix:relative/path \
	"unix:/$(printf 'a%.0s' $(seq 1 120))"; do
	row 2 "invalid --listen '${l:0:60};0..65535;unix:/ABSOLUTE/PATH;107 bytes" \
		daemon --listen "$l"
done
row 2 "not a loopback address;--allow-remote" daemon --listen 0.0.0.0:1
row 2 "not a loopback address;--allow-remote" daemon --listen [::]:1
row 2 "too many --listen (at most 4)" daemon --listen 127.0.0.1:1 \
	--listen 127.0.0.1:2 --listen 127.0.0.1:3 --listen 127.0.0.1:4 \
	--listen 127.0.0.1:5
libs=()
for _ in $(seq 1 17); do libs+=(--lib /dev/null); done
row 2 "too many --lib (at most 16)" daemon "${libs[@]}"
row 2 "invalid --provider 'x';auto, heapscope, otel_memory or ddheap" \
	daemon --provider x
row 2 "cannot read --lib /nonexistent/lib.so" daemon --lib /nonexistent/lib.so
row 2 "option '--lib' needs a value" daemon --lib
row 2 "--dump-dir /nonexistent is not a writable directory" \
	daemon --lib /dev/null --dump-dir /nonexistent
row 2 "ambiguous option '--l';--lib, --listen" daemon --l x
row 2 "unknown option '--port'" daemon --port 6060
row 2 "option '--verbose' takes no value" daemon --verbose=1
row 2 "unexpected argument 'now'" daemon now
row 2 "option '--token-file' needs a value" daemon --token-file
row 2 "cannot read --token-file /nonexistent" daemon --token-file /nonexistent

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# what cannot run: one line, exit 1
	row 1 "no process $gone;it has exited" record -p $gone
	row 1 "process $$ maps no libheapscope" rate -p $$ 1M
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	row 1 "must run as root;CAP_BPF" record -p 1
	row 1 "must run as root;CAP_BPF" daemon --lib /dev/null \
		--listen 127.0.0.1:1
	row 1 "cannot inspect process 1;CAP_SYS_PTRACE" rate -p 1 1M
	# usage errors are found before the privilege check
	row 2 "invalid pid 'abc'" record -p abc
	unset AS
else
	echo "note: not root: the vanished-pid, not-root and no-permission rows were not run"
fi
echo "$rows invocations"
exit $failed
