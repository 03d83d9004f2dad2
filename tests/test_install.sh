#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_install.sh BUILD_DIR SRC_DIR PREFIX LIBDIR VERSION - `cmake --install`
# into a DESTDIR and the installed tree checked as its users see it:
#   - every file of cmake/install.cmake in its place, the SONAME chain
#     libheapscope.so -> .so.1 -> .so.1.0.0, SONAME and NEEDED (libc only)
#     by readelf;
#   - a program built with `pkg-config --cflags --libs heapscope` (sysroot
#     = DESTDIR) links the installed library and runs on its malloc;
#   - a CMake project with find_package(heapscope) builds against
#     heapscope::heapscope and heapscope::heapscope_static, both run on
#     heapscope's malloc, the static one without libheapscope.so; a
#     find_package(heapscope 2) fails (SameMajorVersion);
#   - `man -l` renders each man page with its NAME line;
#   - the installed heapscope prints --version, and its daemon, given no
#     --lib, wants the installed library (LIBDIR/libheapscope.so.1).
# LIBDIR is the full install libdir (CMAKE_INSTALL_FULL_LIBDIR).
set -euo pipefail
build=$1 src=$2 prefix=$3 libdir=$4 version=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
D=$work/root
fail() { echo "FAIL: $*"; exit 1; }

DESTDIR=$D cmake --install "$build" >"$work/install.log" 2>&1 ||
	fail "cmake --install: $(tail -5 "$work/install.log")"
L=$D$libdir

# ---- the tree
for f in "$L/libheapscope.so.$version" "$L/libheapscope.a" \
	"$D$prefix/include/heapscope/heapscope.h" "$D$prefix/include/heapscope/abi.h" \
	"$L/pkgconfig/heapscope.pc" "$L/cmake/heapscope/heapscopeConfig.cmake" \
	"$L/cmake/heapscope/heapscopeConfigVersion.cmake" \
	"$L/cmake/heapscope/heapscopeTargets.cmake" \
	"$D$prefix/bin/heapscope" "$D$prefix/lib/systemd/system/heapscope.service" \
	"$D$prefix/share/doc/heapscope/README.md" "$D$prefix/share/doc/heapscope/collector.md" \
	"$D$prefix/share/doc/heapscope/deploy.md"; do
	[ -f "$f" ] || fail "not installed: ${f#$D}"
done
[ "$(readlink "$L/libheapscope.so.1")" = "libheapscope.so.$version" ] ||
	fail "libheapscope.so.1 -> $(readlink "$L/libheapscope.so.1")"
[ "$(readlink "$L/libheapscope.so")" = "libheapscope.so.1" ] ||
	fail "libheapscope.so -> $(readlink "$L/libheapscope.so")"
soname=$(readelf -d "$L/libheapscope.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libheapscope.so.1 ] || fail "SONAME '$soname'"
needed=$(readelf -d "$L/libheapscope.so.$version" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ "$needed" = "libc.so.6 " ] || fail "the library needs '$needed', not libc alone"
nm "$L/libheapscope.a" >"$work/a.nm" 2>/dev/null
for s in malloc free calloc realloc posix_memalign; do
	grep -qx "[0-9a-f]* T $s" "$work/a.nm" || fail "libheapscope.a does not define $s"
done
echo "tree: SONAME $soname, NEEDED $needed; libheapscope.a defines malloc, free, ..."

# ---- pkg-config
export PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
[ "$(pkg-config --modversion heapscope)" = "$version" ] ||
	fail "pkg-config --modversion: $(pkg-config --modversion heapscope)"
flags=$(pkg-config --cflags --libs heapscope)
echo "pkg-config --cflags --libs heapscope: $flags"
# shellcheck disable=SC2086
cc -o "$work/pc_consumer" "$src/tests/install_consumer/consumer.c" $flags ||
	fail "build with pkg-config flags"
readelf -d "$work/pc_consumer" >"$work/pc.dyn"
grep -q 'NEEDED.*\[libheapscope.so.1\]' "$work/pc.dyn" ||
	fail "pkg-config program does not need libheapscope.so.1"
check_run() { # label program...: runs at period 1, wants >= 200 samples
	local label=$1 out
	shift
	out=$(HEAPSCOPE_SAMPLE_RATE=1 "$@") || fail "$label: exit $?"
	case $out in
	"period 1 samples "*) ;;
	*) fail "$label printed '$out'" ;;
	esac
	[ "${out##* }" -ge 200 ] || fail "$label: $out (not heapscope's malloc)"
	echo "$label: $out"
}
check_run "pkg-config program" env LD_LIBRARY_PATH="$L" "$work/pc_consumer"
LD_LIBRARY_PATH=$L ldd "$work/pc_consumer" >"$work/pc.ldd"
grep -q "libheapscope.so.1 => $L/libheapscope.so.1" "$work/pc.ldd" ||
	fail "pkg-config program does not load the installed library"

# ---- find_package(heapscope)
cmake -S "$src/tests/install_consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$D$prefix" \
	>"$work/cm.log" 2>&1 || fail "find_package(heapscope): $(tail -20 "$work/cm.log")"
cmake --build "$work/cm" >>"$work/cm.log" 2>&1 || fail "consumer build: $(tail -20 "$work/cm.log")"
check_run "find_package heapscope::heapscope" "$work/cm/consumer_shared"
check_run "find_package heapscope::heapscope_static" "$work/cm/consumer_static"
readelf -d "$work/cm/consumer_static" >"$work/st.dyn"
grep -q 'NEEDED.*libheapscope' "$work/st.dyn" && fail "the static consumer needs libheapscope.so"
nm "$work/cm/consumer_static" >"$work/st.nm"
grep -qx '[0-9a-f]* T malloc' "$work/st.nm" || fail "the static consumer does not define malloc"
mkdir "$work/v2"
sed 's/find_package(heapscope 1.0 /find_package(heapscope 2 /' \
	"$src/tests/install_consumer/CMakeLists.txt" >"$work/v2/CMakeLists.txt"
cp "$src/tests/install_consumer/consumer.c" "$work/v2/"
cmake -S "$work/v2" -B "$work/v2/b" -DCMAKE_PREFIX_PATH="$D$prefix" >"$work/v2.log" 2>&1 &&
	fail "find_package(heapscope 2) accepted version $version"
echo "find_package(heapscope 2) refused: $(grep -m1 -o 'version: [0-9.]*' "$work/v2.log" || echo yes)"

# ---- man pages
pages=$(cd "$D$prefix/share/man" && ls man1/*.gz man7/*.gz | tr '\n' ' ')
[ "$pages" = "man1/heapscope-daemon.1.gz man1/heapscope-leaks.1.gz man1/heapscope-rate.1.gz man1/heapscope-record.1.gz man1/heapscope-rss.1.gz man1/heapscope-symbolize.1.gz man1/heapscope.1.gz man7/libheapscope.7.gz " ] ||
	fail "man pages: $pages"
for p in $pages; do
	n=$(basename "$p" | sed 's/\.[0-9]\.gz$//')
	MANWIDTH=80 man -l "$D$prefix/share/man/$p" 2>"$work/man.err" >"$work/man.txt" ||
		fail "man -l $p: $(cat "$work/man.err")"
	[ ! -s "$work/man.err" ] || fail "man -l $p warns: $(cat "$work/man.err")"
	awk -v n="$n" 'prev == "NAME" && $1 == n && $2 == "-" { ok = 1 } { prev = $1 }
		END { exit !ok }' "$work/man.txt" || fail "$p: no NAME line for $n"
done
# every command of `heapscope --help` has its page, and only those
bin=$D$prefix/bin/heapscope
cmds=$("$bin" --help | awk '/^Commands:$/ {on = 1; next} on && /^$/ {exit} on {print "man1/heapscope-" $1 ".1.gz"}' | sort | tr '\n' ' ')
[ "$cmds" = "man1/heapscope-daemon.1.gz man1/heapscope-leaks.1.gz man1/heapscope-rate.1.gz man1/heapscope-record.1.gz man1/heapscope-rss.1.gz man1/heapscope-symbolize.1.gz " ] ||
	fail "commands in --help: $cmds"
MANWIDTH=80 man -l "$D$prefix/share/man/man7/libheapscope.7.gz" >"$work/man7.txt"
grep -q 'HEAPSCOPE_SAMPLE_RATE=BYTES' "$work/man7.txt" || fail "libheapscope(7) lacks HEAPSCOPE_SAMPLE_RATE"
echo "man -l: $pages"

# ---- the installed command
v=$("$bin" --version)
case $v in "heapscope $version"*) ;; *) fail "--version printed '$v'" ;; esac
echo "--version: $v"
"$bin" daemon --help >"$work/dhelp"
grep -q "$libdir/libheapscope.so.1" "$work/dhelp" || fail "daemon --help does not name the installed library"
if [ -e "$libdir/libheapscope.so.1" ]; then
	echo "($libdir/libheapscope.so.1 is installed on this host: default --lib run not checked)"
else
	rc=0
	"$bin" daemon --listen 127.0.0.1:1 2>"$work/d.err" || rc=$?
	[ $rc -ne 0 ] || fail "daemon started without a library"
	grep -q "cannot read the installed library $libdir/libheapscope.so.1" "$work/d.err" ||
		fail "daemon without --lib: $(cat "$work/d.err")"
	echo "daemon without --lib wants $libdir/libheapscope.so.1: $(cat "$work/d.err")"
fi
echo "PASS: installed tree"
