#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tls_size.sh LIB - the allocator's thread-local block (PT_TLS
# MemSiz, from readelf -l) must stay within 256 bytes, so that LIB can be
# dlopen'ed after other libraries took some of the ~512 bytes glibc keeps
# for all dlopen'ed initial-exec TLS (issue 14; the dlopen itself is
# tests/tls.cmake's tls_dlopen_after_static_tls_*).  And initial-exec
# only: no __tls_get_addr on the fast path.
set -u
LIMIT=256
hdr=$(readelf -lW "$1") || { echo "FAIL: readelf -l $1"; exit 1; }
hex=$(printf '%s\n' "$hdr" | awk '$1 == "TLS" { print $6 }')
[ -n "$hex" ] || { echo "no PT_TLS in $1: 0 bytes"; exit 0; }
size=$(printf '%d' "$hex")
echo "PT_TLS MemSiz of $1: $size bytes (limit $LIMIT)"
[ "$size" -le "$LIMIT" ] || {
	echo "FAIL: thread-local state $size bytes > $LIMIT"
	readelf -sW "$1" | awk '$4 == "TLS" { print "  " $8 ": " $3 " bytes" }'
	exit 1
}
# initial-exec model: no __tls_get_addr in the allocator
if readelf -rW "$1" | grep -q __tls_get_addr; then
	echo "FAIL: general-dynamic TLS access (__tls_get_addr)"
	exit 1
fi
