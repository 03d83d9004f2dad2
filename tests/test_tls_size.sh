#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tls_size.sh LIB - the allocator's thread-local block (PT_TLS
# MemSiz, from readelf -l) must stay small: fails above 4 KiB.
set -u
hex=$(readelf -lW "$1" | awk '$1 == "TLS" { print $6 }')
[ -n "$hex" ] || { echo "no PT_TLS in $1"; exit 0; }
size=$(printf '%d' "$hex")
echo "PT_TLS MemSiz of $1: $size bytes"
[ "$size" -le 4096 ] || { echo "FAIL: thread-local state > 4 KiB"; exit 1; }
# initial-exec model: no __tls_get_addr in the allocator
if readelf -rW "$1" | grep -q __tls_get_addr; then
	echo "FAIL: general-dynamic TLS access (__tls_get_addr)"
	exit 1
fi
