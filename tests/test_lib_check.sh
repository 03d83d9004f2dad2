#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_lib_check.sh HEAPSCOPE LIB COMPAT FAKE - --lib naming a file that
# is not libheapscope (the program /bin/true, libc) gets one line "--lib
# '...' is not libheapscope", exit 2, nothing on stdout, for record,
# daemon, rate, rss and leaks, before anything runs (no root needed: the
# check is the command line's).  Accepted as before: the library itself,
# a compatible provider's library (otel_memory notes: COMPAT), the fake
# library's heapscope notes (FAKE), a non-regular file (/dev/null), a
# path this process cannot see, and a file-name prefix (all but daemon,
# which would start).
set -u
HS=$1 LIB=$2 COMPAT=$3 FAKE=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
LIBC=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
[ -f "$LIBC" ] || { echo "FAIL: no libc found for /bin/true"; exit 1; }

# each subcommand with a pid that cannot exist past the command line
# (the check must come first) and a short duration
cmds=("record -p 1 -d 1" "daemon" "rate -p 1 1M" "rss -p 1" "leaks -p 1 -d 4")
for c in "${cmds[@]}"; do
	for bad in /bin/true "$LIBC"; do
		# shellcheck disable=SC2086
		"$HS" $c --lib "$bad" >"$work/out" 2>"$work/err" </dev/null
		rc=$?
		first=$(head -1 "$work/err")
		sub=${c%% *}
		if [ "$rc" != 2 ] || [ -s "$work/out" ] ||
			[ "$(wc -l <"$work/err")" -gt 2 ] ||
			[ "$first" != "heapscope $sub: --lib '$bad' is not libheapscope (no heapscope probe notes in it; pass the libheapscope.so the process loads)" ]; then
			echo "FAIL: $c --lib $bad: exit $rc: $(cat "$work/err")"
			failed=1
		else
			echo "ok: $c --lib $bad: $first"
		fi
	done
	# (a daemon with a good --lib would start: its command line is
	# checked by cli_errors)
	[ "$c" = daemon ] && continue
	for good in "$LIB" "$COMPAT" "$FAKE" /dev/null /nonexistent/libheapscope.so libheapscope; do
		# shellcheck disable=SC2086
		timeout 10 "$HS" $c --lib "$good" >"$work/out" 2>"$work/err" </dev/null
		if grep -q "is not libheapscope" "$work/err"; then
			echo "FAIL: $c --lib $good refused: $(cat "$work/err")"
			failed=1
		fi
	done
done
[ $failed = 0 ] && echo PASS
exit $failed
