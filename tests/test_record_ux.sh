#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `heapscope record`'s smaller things (issue 17, item 7).
#  MODE=value:   --value is refused, with one line on stderr and exit 2,
#                when it does not belong to --profile; values that belong
#                get past option parsing (no root needed: parsing comes
#                first).
#  MODE=session: (root, BPF) names_target copied to a path longer than
#                200 bytes: the pprof comment naming the binary is whole
#                (it was cut at 159 bytes); stderr says what record is
#                attached to and how to stop it; without a terminal there
#                is no progress line, on one (script(1)'s pty) a progress
#                line at most once a second.
# Exit 77 = skip, a failure when CI=true.
set -u
MODE=$1 HEAPSCOPE=$2

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
fail=0
work=$(mktemp -d)
tpid=""
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
# a valid pid (below pid_max) that no process has: the option checks come
# before the pid is looked up
NOPID=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
while [ -e /proc/$NOPID ]; do NOPID=$((NOPID - 1)); done

if [ "$MODE" = value ]; then
	refuse() { # profile value
		"$HEAPSCOPE" record -p "$NOPID" --profile "$1" --value "$2" \
			>"$work/out" 2>"$work/err"
		rc=$?
		if [ $rc -ne 2 ] || [ "$(wc -l <"$work/err")" -ne 2 ] || ! grep -q "^try 'heapscope record --help'" "$work/err" ||
			! grep -q "^heapscope record: --value $2 does not belong to --profile $1 " "$work/err"; then
			echo "FAIL: --profile $1 --value $2: rc $rc, stderr:"; cat "$work/err"; fail=1
		else
			echo "ok: refused: $(cat "$work/err")"
		fi
	}
	accept() { # profile value: parsing passes, whatever fails after it
		"$HEAPSCOPE" record -p "$NOPID" --profile "$1" --value "$2" \
			>"$work/out" 2>"$work/err"
		if grep -q "does not belong\|invalid --value" "$work/err"; then
			echo "FAIL: --profile $1 --value $2 refused:"; cat "$work/err"; fail=1
		else
			echo "ok: accepted: --profile $1 --value $2"
		fi
	}
	refuse heap lifetime_mean
	refuse heap same_thread
	refuse heap lifetime
	refuse heap fragmentation
	refuse allocs resident
	refuse allocs lifetime_max
	refuse peak huge
	refuse lifetime resident
	refuse lifetime fragmentation_age
	refuse fragmentation lifetime_min
	refuse fragmentation swapped
	# --value before --profile is judged against the profile too
	"$HEAPSCOPE" record --value huge -p "$NOPID" --profile lifetime 2>"$work/err"
	[ $? -eq 2 ] && grep -q "does not belong to --profile lifetime" "$work/err" ||
		{ echo "FAIL: --value before --profile"; cat "$work/err"; fail=1; }
	for v in inuse requested objects resident swapped not_resident huge; do
		accept heap $v
	done
	for v in objects lifetime lifetime_mean lifetime_min lifetime_max same_thread; do
		accept lifetime $v
	done
	accept fragmentation fragmentation_age
	accept allocs objects
	accept peak requested
	[ $fail -eq 0 ] && echo PASS
	exit $fail
fi

LIB=$3 TARGET=$4
[ "$(id -u)" -eq 0 ] || skip "needs root for BPF"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"
command -v go >/dev/null || skip "go (golang-go) not installed: go tool pprof"
command -v script >/dev/null || skip "script (util-linux) not installed"

# a directory path of > 200 bytes
long=$work/a-directory-with-a-long-name-to-make-the-binary-path-long
long=$long/another-directory-with-a-long-name-0123456789abcdef
long=$long/and-a-third-one-so-that-the-whole-path-is-well-over-200-bytes
mkdir -p "$long" && cp "$TARGET" "$long/names_target" || exit 1
bin=$long/names_target
[ ${#bin} -gt 200 ] || { echo "FAIL: path only ${#bin} bytes"; exit 1; }

LD_PRELOAD="$LIB" "$bin" >"$work/target.out" 2>"$work/target.err" &
tpid=$!
for _ in $(seq 1 200); do
	grep -q '^ready' "$work/target.out" 2>/dev/null && break
	sleep 0.05
done
grep -q '^ready' "$work/target.out" || { echo "FAIL: target not ready"; exit 1; }

# 1. not a terminal: attached line, no progress line
"$HEAPSCOPE" record -p "$tpid" -d 2 --format pprof -o "$work/heap.pb.gz" \
	2>"$work/rec.err" || { echo "FAIL: record"; cat "$work/rec.err"; exit 1; }
cat "$work/rec.err"
if ! grep -q "^heapscope: attached to .*libheapscope[^ ]* in process $tpid; recording for 2 s or until it exits (Ctrl-C or kill -INT [0-9]* stops early" "$work/rec.err"; then
	echo "FAIL: no 'attached to ... how to stop' line"; fail=1
fi
if grep -q $'\r' "$work/rec.err"; then
	echo "FAIL: progress line written to a file"; fail=1
fi

# 2. the comment with the binary path is whole
export HOME=${HOME:-/root} GOFLAGS=-mod=mod GOTOOLCHAIN=local
go tool pprof -comments "$work/heap.pb.gz" >"$work/comments" 2>"$work/pprof.err" ||
	{ echo "FAIL: go tool pprof -comments"; cat "$work/pprof.err"; exit 1; }
cat "$work/comments"
want="heapscope: pid $tpid (nspid $tpid) $bin"
if grep -qxF "$want" "$work/comments"; then
	echo "ok: comment of ${#want} bytes kept whole"
else
	echo "FAIL: no comment line '$want'"; fail=1
fi

# 3. on a terminal: a progress line at most once a second; 4 s give
# 3 or 4 of them (the first after 1 s), each with a later second
script -qec "$HEAPSCOPE record -p $tpid -d 4 -o $work/heap.folded" "$work/tty" \
	>/dev/null 2>&1 || { echo "FAIL: record on a pty"; cat "$work/tty"; exit 1; }
tr '\r' '\n' <"$work/tty" | grep -E '^heapscope: [0-9]+ s, [0-9]+ live samples, [0-9]+ events, [0-9]+ lost' \
	>"$work/progress"
cat "$work/progress"
n=$(wc -l <"$work/progress")
if [ "$n" -lt 2 ] || [ "$n" -gt 4 ]; then
	echo "FAIL: $n progress lines in 4 s (want 2..4: at most one a second)"; fail=1
fi
if ! awk '{ s = $2 + 0; if (NR > 1 && s <= prev) bad = 1; prev = s } END { exit bad }' "$work/progress"; then
	echo "FAIL: progress seconds do not increase"; fail=1
fi
if ! grep -q 'live samples' "$work/progress" ||
	! awk '$4 + 0 > 0 { ok = 1 } END { exit !ok }' "$work/progress"; then
	echo "FAIL: progress shows no live samples"; fail=1
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
