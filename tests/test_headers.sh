#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_headers.sh INCLUDE_DIR LIB TU - issue 14 item 4: every public
# header (INCLUDE_DIR/heapscope/*.h) compiles with -Wall -Wextra -Werror
# -pedantic -Wundef as C99 and C11 (gcc, clang) and as C++11, C++17 and
# C++20 (g++, clang++); each program links against LIB (libheapscope.so)
# and runs, printing the period it was given (HEAPSCOPE_SAMPLE_RATE).  A
# false HEAPSCOPE_STATIC_ASSERT must fail the build in each language (so
# the C99 fallback is not a no-op).  TU: tests/programs/headers_tu.c.
set -u
INC=$1 LIB=$2 TU=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

headers=$(cd "$INC" && ls heapscope/*.h)
[ -n "$headers" ] || { echo "FAIL: no headers in $INC/heapscope"; exit 1; }
for h in $headers $headers; do echo "#include <$h>"; done >"$work/all_headers.h"
{
	echo '#include "all_headers.h"'
	echo 'HEAPSCOPE_STATIC_ASSERT(sizeof(struct heapscope_record) == 1, neg);'
	echo 'int main(void) { return 0; }'
} >"$work/neg.c"
flags=(-Wall -Wextra -Werror -pedantic -Wundef -I"$INC" -I"$work")
libdir=$(dirname "$LIB")

for spec in gcc:c:c99 gcc:c:c11 clang:c:c99 clang:c:c11 \
	g++:c++:c++11 g++:c++:c++17 g++:c++:c++20 \
	clang++:c++:c++11 clang++:c++:c++17 clang++:c++:c++20; do
	IFS=: read -r cc lang std <<<"$spec"
	before=$failed failed=0
	command -v "$cc" >/dev/null || { fail "$cc missing (scripts/bootstrap.sh)"; continue; }
	exe=$work/tu_${cc}_$std
	if ! "$cc" -x "$lang" -std="$std" "${flags[@]}" "$TU" -x none \
		-L"$libdir" -Wl,-rpath,"$libdir" -lheapscope -o "$exe" \
		2>"$work/err"; then
		fail "$cc -std=$std: $(head -5 "$work/err")"
		failed=1
		continue
	fi
	out=$(HEAPSCOPE_SAMPLE_RATE=4096 "$exe")
	[ "$out" = "period 4096 attached 1 format 1 depth 0" ] ||
		fail "$cc -std=$std: the program printed '$out'"
	if "$cc" -x "$lang" -std="$std" "${flags[@]}" -c "$work/neg.c" \
		-o "$work/neg.o" 2>/dev/null; then
		fail "$cc -std=$std: a false HEAPSCOPE_STATIC_ASSERT compiled"
	fi
	[ $failed = 0 ] && echo "ok: $cc -std=$std: $(echo $headers) compile, link, run"
	[ $before = 1 ] && failed=1
done
exit $failed
