#!/bin/sh
# SPDX-License-Identifier: MIT
# realprog_gcc.sh LIB SRCDIR - issue 7 item 4: a compiler building a real C
# project under the allocator.  A snapshot of this repository's sources
# (SRCDIR without build directories) is configured with cmake and built
# with gcc (the allocator and the pprof encoder: libheapscope.so,
# libheapscope.a; no collector, no tests) twice in the same path: once
# under glibc, once with LIB in LD_PRELOAD for the whole build (cmake's
# configure checks, make, gcc, cc1, as, collect2, ld, ar).  Fails unless
# both builds succeed and every object file, archive and the shared
# library are byte-identical, and the library built under preload runs a
# program (sort) with the same output.  HEAPSCOPE_SAMPLE_RATE from the
# caller's environment.  Exit 77 = skip (no gcc/cmake), failure if CI=true.
set -u
lib=$(realpath "$1") src=$2
skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
command -v gcc >/dev/null || skip "no gcc"
command -v cmake >/dev/null || skip "no cmake"
work=$(mktemp -d /tmp/hs-realprog-gcc.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
# One snapshot for both builds (other work in SRCDIR must not change the
# sources between them).
mkdir "$work/src"
(cd "$src" && tar cf - --exclude='./build*' --exclude=./.git --exclude=./demo-out \
	CMakeLists.txt LICENSE cmake packaging allocator common include) | (cd "$work/src" && tar xf -) ||
	{ echo "FAIL: cannot snapshot $src"; exit 1; }

build() { # NAME [LIB]
	rm -rf "$work/b"
	(
		if [ -n "${2:-}" ]; then export LD_PRELOAD="$2"; fi
		export CC=gcc
		cmake -S "$work/src" -B "$work/b" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
			-DHEAPSCOPE_BUILD_COLLECTOR=OFF -DHEAPSCOPE_BUILD_TESTS=OFF &&
			cmake --build "$work/b" -j1
	) >"$work/$1.log" 2>&1 || { echo "FAIL: $1 build"; tail -30 "$work/$1.log"; exit 1; }
	mkdir "$work/$1"
	(cd "$work/b" && find . \( -name '*.o' -o -name '*.a' -o -name '*.so*' \) -type f |
		sort | while read -r f; do
			mkdir -p "$work/$1/$(dirname "$f")"; cp "$f" "$work/$1/$f"
		done)
}
build plain
build pre "$lib"
n=$(cd "$work/plain" && find . -type f | wc -l)
[ "$n" -ge 10 ] || { echo "FAIL: only $n build products"; exit 1; }
if ! diff -r "$work/plain" "$work/pre" >"$work/diff"; then
	echo "FAIL: build products differ with LD_PRELOAD=$lib:"
	head -20 "$work/diff"
	exit 1
fi
if grep -q '^heapscope:' "$work/pre.log"; then
	echo "FAIL: heapscope reports during the build:"; grep '^heapscope:' "$work/pre.log" | head
	exit 1
fi
# the product works: sort under the freshly built allocator
built=$(find "$work/pre" -name 'libheapscope.so*' -type f | head -1)
seq 1 200000 | sort -R --random-source=/dev/zero >"$work/in"
sort -n "$work/in" | md5sum >"$work/sort.plain"
LD_PRELOAD=$built sort -n "$work/in" | md5sum >"$work/sort.pre"
cmp -s "$work/sort.plain" "$work/sort.pre" || { echo "FAIL: sort under the built library"; exit 1; }
echo "HEAPSCOPE_SAMPLE_RATE=${HEAPSCOPE_SAMPLE_RATE-unset (default)}:" \
	"$n build products byte-identical ($(cd "$work/pre" && find . -name '*.o' | wc -l) objects," \
	"$(basename "$built")); sort under the built library: same output"
