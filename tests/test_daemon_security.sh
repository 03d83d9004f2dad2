#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Who may read a profile (issue 14 item 6).
#   test_daemon_security.sh token_file HEAPSCOPE
#       --token-file refusals, each one line + the hint, exit 2, before
#       anything is opened (no root, no BPF): mode 0644, 0640, 0604, 0620,
#       a directory, /dev/null, a FIFO, an empty file, a lone newline, a
#       token with a space, one of 4097 bytes, a missing file; a
#       --token-file with only unix sockets
#   test_daemon_security.sh access HEAPSCOPE LIB HOLD
#       the daemon on TCP with --token-file and on a unix socket; two
#       hold_100mib targets, one run by root and one by user nobody:
#       - the socket is mode 0666 (any user may connect);
#       - root over the socket: /processes lists both, both profiles 200;
#       - nobody over the socket (curl --unix-socket under setpriv):
#         /processes lists only its own; its own profile 200 (with the
#         hold_100mib frames), root's 403 (heap and allocs), comm= finds
#         its own; /metrics has per-process series for its pid only;
#       - a set-uid-root program run by nobody is not nobody's to read
#         (real uid nobody, effective uid root: 403);
#       - TCP: no token 401 with WWW-Authenticate, a wrong token (also a
#         prefix and an extension of the right one) 401, the right one
#         200 and every process; a token in another scheme (Basic) 401.
# Exit 77 = skip (not root / no BPF / no curl, setpriv), a failure when
# CI=true.
set -u
MODE=$1 HEAPSCOPE=$2
. "$(dirname "$0")/lib.sh"
work=$(mktemp -d)
chmod 755 "$work"
dpid="" tpids=()
cleanup() {
	for p in "${tpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# refused FILE WORDS...: the daemon refuses --token-file FILE with exit 2,
# a one-line error naming FILE and each of WORDS (grep -i), and the hint.
refused() {
	local f=$1 rc n; shift
	"$HEAPSCOPE" daemon --lib /dev/null --listen 127.0.0.1:1 \
		--token-file "$f" >"$work/out" 2>"$work/err"
	rc=$?
	n=$(wc -l <"$work/err")
	if [ $rc -ne 2 ] || [ "$n" -ne 2 ] ||
		! head -1 "$work/err" | grep -qF "heapscope daemon: " ||
		! head -1 "$work/err" | grep -qF -- "$f" ||
		[ "$(sed -n 2p "$work/err")" != "try 'heapscope daemon --help'" ]; then
		fail "--token-file $f: exit $rc, $n lines: $(cat "$work/err")"
		return
	fi
	for w in "$@"; do
		head -1 "$work/err" | grep -qi -- "$w" ||
			{ fail "--token-file $f: no '$w' in: $(head -1 "$work/err")"; return; }
	done
	echo "ok: refused: $(head -1 "$work/err")"
}

case $MODE in
token_file)
	tok=$work/tok
	for m in 644 640 604 620 602 660; do
		echo secret >"$tok"; chmod "$m" "$tok"
		refused "$tok" "mode 0$m" "group or others" "chmod 600"
	done
	mkdir "$work/dir"; chmod 700 "$work/dir"
	refused "$work/dir" "not a regular file"
	refused /dev/null "not a regular file"
	mkfifo -m 600 "$work/fifo"
	refused "$work/fifo" "not a regular file"
	: >"$tok"; chmod 600 "$tok"
	refused "$tok" "empty" "1..4096 bytes"
	echo >"$tok"
	refused "$tok" "empty"
	echo "sec ret" >"$tok"
	refused "$tok" "byte 4" "space"
	head -c 4097 /dev/zero | tr '\0' a >"$tok"
	refused "$tok" "more than 4096 bytes"
	refused "$work/missing" "cannot read" "No such file"
	# a token guards TCP: with only unix sockets it would guard nothing
	echo secret >"$tok"; chmod 600 "$tok"
	"$HEAPSCOPE" daemon --lib /dev/null --listen "unix:$work/s" \
		--token-file "$tok" 2>"$work/err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 2 ] &&
		grep -q "guards TCP" "$work/err" ||
		fail "token with unix sockets only: exit $rc: $(cat "$work/err")"
	exit $failed
	;;
access) ;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac

LIB=$3 HOLD=$4
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF, setpriv)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
command -v curl >/dev/null || skip "no curl (scripts/bootstrap.sh)"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
NOBODY=65534
# nobody must reach the binaries: copies in a 0755 directory
mkdir -m 755 "$work/bin" "$work/run"
cp "$LIB" "$work/bin/libheapscope.so"
cp "$HOLD" "$work/bin/hold_100mib"
chmod 755 "$work/bin/libheapscope.so" "$work/bin/hold_100mib"
LIB=$work/bin/libheapscope.so HOLD=$work/bin/hold_100mib
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }

start_target() { # out [setpriv args...]
	local out=$1; shift
	"$@" env HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=7 \
		LD_PRELOAD="$LIB" "$HOLD" >"$out" 2>&1 &
	tpid=$!
	tpids+=("$tpid")
	for _ in $(seq 1 200); do
		grep -q '^ready' "$out" && return 0
		sleep 0.05
	done
	fail "target did not start: $(cat "$out")"
	exit 1
}
start_target "$work/root.out"
rpid=$tpid
start_target "$work/nobody.out" setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups
npid=$tpid
[ "$(stat -c %u /proc/$npid)" = $NOBODY ] || fail "the nobody target runs as $(stat -c %u /proc/$npid)"
# a set-uid-root copy of the target, run by nobody: real uid nobody,
# effective uid root, not dumpable
cp "$HOLD" "$work/bin/hold_suid"
chmod 4755 "$work/bin/hold_suid"
# (set-uid ignores LD_PRELOAD of a non-system path: it links nothing of
# ours, so it is only a process nobody must not be told it may read)
setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$work/bin/hold_suid" \
	>"$work/suid.out" 2>&1 &
spid=$!
tpids+=("$spid")

echo "token-$$-$RANDOM-$RANDOM" >"$work/token"
chmod 600 "$work/token"
TOKEN=$(cat "$work/token")
SOCK=$work/run/http.sock
hs_start_daemon "$work/d.err" --lib "$LIB" --no-copies --listen "unix:$SOCK" --token-file "$work/token"
head -3 "$work/d.err"
TCP=http://127.0.0.1:$port

[ "$(stat -c %a "$SOCK")" = 666 ] || fail "socket mode $(stat -c %a "$SOCK") (want 666)"
[ "$(stat -c %F "$SOCK")" = socket ] || fail "$SOCK is not a socket"

# u_code WHO PATH [curl args]: the status of PATH over the unix socket as
# WHO (root or nobody); the body in $work/body
u_code() {
	local who=$1 path=$2; shift 2
	if [ "$who" = nobody ]; then
		as_nobody curl -s -o - -w '\n%{http_code}' --max-time 30 \
			--unix-socket "$SOCK" "$@" "http://localhost$path" >"$work/resp"
	else
		curl -s -o - -w '\n%{http_code}' --max-time 30 \
			--unix-socket "$SOCK" "$@" "http://localhost$path" >"$work/resp"
	fi
	tail -1 "$work/resp"
	sed '$d' "$work/resp" >"$work/body"
}
expect() { # what want got
	if [ "$3" = "$2" ]; then echo "ok: $1 -> $3"; else fail "$1 -> $3 (want $2)"; fi
}
lists() { grep -q "\"pid\": $1," "$work/body"; }

# root over the socket: every process
expect "root: /processes" 200 "$(u_code root /processes)"
lists $rpid || fail "root's /processes lacks root's $rpid"
lists $npid || fail "root's /processes lacks nobody's $npid"
for p in $rpid $npid; do
	expect "root: heap of $p" 200 "$(u_code root "/debug/pprof/heap?pid=$p&format=folded")"
	grep -q hold_100mib "$work/body" || fail "root: heap of $p lacks hold_100mib"
done

# nobody over the socket: its own only
expect "nobody: /processes" 200 "$(u_code nobody /processes)"
lists $npid || fail "nobody's /processes lacks its own $npid: $(cat "$work/body")"
lists $rpid && fail "nobody's /processes lists root's $rpid"
n=$(grep -c '"pid":' "$work/body")
[ "$n" -eq 1 ] || fail "nobody's /processes lists $n processes (want 1): $(cat "$work/body")"
expect "nobody: own heap" 200 "$(u_code nobody "/debug/pprof/heap?pid=$npid&format=folded")"
grep -q hold_100mib "$work/body" || fail "nobody's own heap lacks hold_100mib"
expect "nobody: own heap (pprof)" 200 "$(u_code nobody "/debug/pprof/heap?pid=$npid")"
expect "nobody: root's heap" 403 "$(u_code nobody "/debug/pprof/heap?pid=$rpid")"
echo "    ($(head -1 "$work/body"))"
grep -q hold_100mib "$work/body" && fail "nobody got some of root's profile"
expect "nobody: root's allocs" 403 "$(u_code nobody "/debug/pprof/allocs?pid=$rpid&seconds=1")"
expect "nobody: pid 1" 403 "$(u_code nobody "/debug/pprof/heap?pid=1")"
if awk '$1 == "Uid:" { exit !($2 == '$NOBODY' && $3 == 0) }' /proc/$spid/status; then
	expect "nobody: its set-uid-root process $spid" 403 \
		"$(u_code nobody "/debug/pprof/heap?pid=$spid")"
else
	echo "note: set-uid not honoured here (nosuid mount?): case not run"
fi
expect "nobody: no such pid" 404 "$(u_code nobody "/debug/pprof/heap?pid=2147483646")"
# the discovery, the index and the per-process metrics follow the same rule
expect "nobody: /targets" 200 "$(u_code nobody /targets)"
grep -q "\"__param_pid\": \"$npid\"" "$work/body" || fail "nobody's /targets lacks its own $npid: $(cat "$work/body")"
grep -q "\"__param_pid\": \"$rpid\"" "$work/body" && fail "nobody's /targets lists root's $rpid"
expect "root: /targets" 200 "$(u_code root /targets)"
grep -q "\"__param_pid\": \"$rpid\"" "$work/body" || fail "root's /targets lacks root's $rpid"
expect "nobody: index" 200 "$(u_code nobody /debug/pprof/)"
grep -q "heap?pid=$rpid&" "$work/body" && fail "nobody's index links root's $rpid"
grep -q "heap?pid=$npid&" "$work/body" || fail "nobody's index lacks its own $npid"
expect "nobody: root's /metrics?pid" 403 "$(u_code nobody "/metrics?pid=$rpid")"
expect "nobody: own /metrics?pid" 200 "$(u_code nobody "/metrics?pid=$npid")"
# two followed processes named hold_100mib: root sees both (409), nobody one
expect "root: comm=hold_100mib" 409 "$(u_code root "/debug/pprof/heap?comm=hold_100mib")"
expect "nobody: comm=hold_100mib" 200 "$(u_code nobody "/debug/pprof/heap?comm=hold_100mib&format=folded")"
grep -q hold_100mib "$work/body" || fail "nobody's comm= profile lacks hold_100mib"
expect "nobody: /metrics" 200 "$(u_code nobody /metrics)"
grep -q "^heapscope_process_sampled_bytes{pid=\"$npid\"" "$work/body" ||
	fail "nobody's /metrics lacks its own $npid"
grep -q "pid=\"$rpid\"" "$work/body" && fail "nobody's /metrics has root's $rpid"
expect "root: /metrics" 200 "$(u_code root /metrics)"
for p in $rpid $npid; do
	grep -q "^heapscope_process_sampled_bytes{pid=\"$p\"" "$work/body" ||
		fail "root's /metrics lacks $p"
done

# TCP: the bearer token
t_code() { curl -s -o "$work/body" -D "$work/h" -w '%{http_code}' --max-time 30 "$@"; }
expect "TCP without a token" 401 "$(t_code "$TCP/processes")"
tr -d '\r' <"$work/h" | grep -qi '^WWW-Authenticate: Bearer' || fail "401 without WWW-Authenticate"
expect "TCP without a token: /metrics" 401 "$(t_code "$TCP/metrics")"
expect "TCP without a token: heap" 401 "$(t_code "$TCP/debug/pprof/heap?pid=$npid")"
expect "TCP, wrong token" 401 "$(t_code -H "Authorization: Bearer wrong" "$TCP/processes")"
expect "TCP, token prefix" 401 "$(t_code -H "Authorization: Bearer ${TOKEN%?}" "$TCP/processes")"
expect "TCP, token extended" 401 "$(t_code -H "Authorization: Bearer ${TOKEN}x" "$TCP/processes")"
expect "TCP, Basic scheme" 401 "$(t_code -H "Authorization: Basic $TOKEN" "$TCP/processes")"
expect "TCP, two Authorization headers" 400 "$(t_code -H "Authorization: Bearer $TOKEN" \
	-H "Authorization: Bearer $TOKEN" "$TCP/processes")"
expect "TCP, right token" 200 "$(t_code -H "Authorization: Bearer $TOKEN" "$TCP/processes")"
lists $rpid && lists $npid || fail "TCP with the token: /processes lacks a target: $(cat "$work/body")"
expect "TCP, right token (scheme in lower case)" 200 \
	"$(t_code -H "Authorization: bearer $TOKEN" "$TCP/debug/pprof/heap?pid=$rpid&format=folded")"
grep -q hold_100mib "$work/body" || fail "TCP with the token: root's heap lacks hold_100mib"
expect "TCP, right token: /metrics" 200 "$(t_code -H "Authorization: Bearer $TOKEN" "$TCP/metrics")"

kill -0 "$dpid" 2>/dev/null || fail "daemon died"
kill "$dpid"; wait "$dpid"; rc=$?; dpid=""
[ $rc -eq 0 ] || fail "daemon exit $rc"
[ -e "$SOCK" ] && fail "the socket $SOCK is left after the daemon stopped"
exit $failed
