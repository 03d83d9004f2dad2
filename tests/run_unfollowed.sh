#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_unfollowed.sh LIB CMD [ARG...] - runs CMD with libheapscope.so
# resolved to a private copy of LIB that no system-wide collector follows,
# so a test can assert what holds only without a collector (semaphores 0)
# on a host where `heapscope daemon` runs (issue 14 item 7).
#
# A daemon attaches to its --lib inodes and, unless --no-copies, to every
# mapped file with the same base name (collector/target/find.c, matches()); the
# copy is a new inode named hs-unfollowed.so, reached through symlinks
# libheapscope.so.1 and libheapscope.so in LD_LIBRARY_PATH (searched before the binaries'
# RUNPATH), and /proc/PID/maps shows the target's name.  `heapscope record
# -p PID` still finds it by its heapscope note.  CMD gets
# HS_EXPECT_COLLECTOR=0 (tests/test_sampled.c asserts it) and the copy's
# path in HS_UNFOLLOWED_LIB.  Exit: CMD's status.
set -u
LIB=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$LIB" "$dir/hs-unfollowed.so" || exit 1
# the SONAME (what binaries linked against the library ask for) and the
# development name
ln -s hs-unfollowed.so "$dir/libheapscope.so.1"
ln -s hs-unfollowed.so "$dir/libheapscope.so"
HS_EXPECT_COLLECTOR=0 HS_UNFOLLOWED_LIB=$dir/hs-unfollowed.so \
	LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"
