#!/bin/sh
# SPDX-License-Identifier: MIT
# preload_run.sh LIB CMD... - runs CMD plainly and with LIB preloaded and
# fails unless both exit 0 with identical stdout.  The caller sets
# HEAPSCOPE_* in the environment (ctest ENVIRONMENT).
set -u
lib=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$@" >"$out/plain" 2>"$out/plain.err"
rc_plain=$?
LD_PRELOAD=$lib "$@" >"$out/preload" 2>"$out/preload.err"
rc_pre=$?
if [ $rc_plain -ne 0 ] || [ $rc_pre -ne 0 ]; then
	echo "exit status: plain $rc_plain, preloaded $rc_pre"
	cat "$out/preload.err"
	exit 1
fi
if ! cmp -s "$out/plain" "$out/preload"; then
	echo "stdout differs with LD_PRELOAD=$lib"
	diff "$out/plain" "$out/preload" | head -20
	exit 1
fi
if grep -q heapscope "$out/preload.err"; then
	echo "heapscope warnings:"
	cat "$out/preload.err"
	exit 1
fi
echo "identical output ($(wc -l <"$out/plain") lines)"
