#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/test_hot_layout.sh LIB - the fast paths and the common slow paths
# (HS_HOT, allocator/base/hs_common.h) each start a 64-byte line of LIB's
# code, so that a change elsewhere in the library cannot move them within
# their lines (one such move made glibc-simple 1.95 s instead of 1.20).
set -euo pipefail
lib=$1
fail=0
syms=$(nm "$lib")
for f in malloc free calloc realloc _Znwm _ZdlPv _ZdlPvm hs_alloc_slow \
	hs_free_slow hs_free_overflow hs_free_remote hs_tc_refill hs_tc_overflow \
	hs_central_remove_range hs_central_insert_range hs_central_insert_chain; do
	addr=$(awk -v f="$f" '$3 == f && ($2 == "T" || $2 == "t") { print $1 }' <<<"$syms" | head -1)
	if [ -z "$addr" ]; then
		echo "FAIL: $f not in $lib"
		fail=1
	elif [ $((16#$addr % 64)) -ne 0 ]; then
		echo "FAIL: $f at 0x$addr, $((16#$addr % 64)) bytes into a 64-byte line"
		fail=1
	else
		echo "ok: $f at 0x$addr"
	fi
done
exit $fail
