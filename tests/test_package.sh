#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_package.sh SRC_DIR OUT_DIR VERSION - scripts/package.sh into OUT_DIR
# (a build for the prefix /usr, cpack -G DEB, lintian), then the packages'
# control fields: the three packages at VERSION-1, libheapscope1 depending
# on libc6 alone and carrying its shlibs and ldconfig trigger, heapscope
# and libheapscope-dev on libheapscope1 (= VERSION-1), heapscope on
# libbpf1, libelf1, libdw1, zlib1g and libmicrohttpd12, recommending
# libdebuginfod1; lintian without an error.  Exit 77 = skip (no lintian,
# dpkg-shlibdeps or file), a failure when CI=true.
set -euo pipefail
src=$1 out=$2 version=$3
skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
for t in lintian dpkg-shlibdeps dpkg-deb file; do
	command -v $t >/dev/null || skip "no $t (scripts/bootstrap.sh)"
done
fail() { echo "FAIL: $*"; exit 1; }
"$src/scripts/package.sh" "$out" || fail "scripts/package.sh"
v=$version-1
field() { dpkg-deb -f "$out/$1_${v}_amd64.deb" "$2"; }
for p in libheapscope1 libheapscope-dev heapscope; do
	[ -f "$out/${p}_${v}_amd64.deb" ] || fail "no package ${p}_${v}_amd64.deb"
done
dep=$(field libheapscope1 Depends)
[[ $dep =~ ^libc6\ \(\>=\ [0-9.]+\)$ ]] || fail "libheapscope1 Depends: '$dep' (libc6 alone expected)"
[ "$(field libheapscope1 Section)" = libs ] || fail "libheapscope1 Section"
ctrl=$(dpkg-deb --ctrl-tarfile "$out/libheapscope1_${v}_amd64.deb" | tar -xO ./shlibs ./triggers)
grep -qx "libheapscope 1 libheapscope1 (>= $v)" <<<"$ctrl" || fail "libheapscope1 shlibs: $ctrl"
grep -qx "activate-noawait ldconfig" <<<"$ctrl" || fail "libheapscope1 triggers: $ctrl"
[ "$(field libheapscope-dev Depends)" = "libheapscope1 (= $v)" ] ||
	fail "libheapscope-dev Depends: $(field libheapscope-dev Depends)"
dep=$(field heapscope Depends)
sed 's/, /\n/g' <<<"$dep" >"$out/collector.deps"
grep -qxF "libheapscope1 (= $v)" "$out/collector.deps" || fail "heapscope Depends lacks libheapscope1 (= $v): $dep"
for d in libbpf1 libelf1 libdw1 zlib1g libmicrohttpd12 libc6; do
	grep -q "^$d\( \|$\)" "$out/collector.deps" || fail "heapscope Depends lacks $d: $dep"
done
[ "$(field heapscope Recommends)" = libdebuginfod1 ] || fail "heapscope Recommends: $(field heapscope Recommends)"
dpkg-deb -c "$out/libheapscope1_${v}_amd64.deb" | awk '{print $6}' | grep -v '/$' | sort >"$out/lib.files"
[ "$(tr '\n' ' ' <"$out/lib.files")" = "./usr/lib/x86_64-linux-gnu/libheapscope.so.1 ./usr/lib/x86_64-linux-gnu/libheapscope.so.$version ./usr/share/doc/libheapscope1/changelog.Debian.gz ./usr/share/doc/libheapscope1/copyright " ] ||
	fail "libheapscope1 holds more than the library: $(tr '\n' ' ' <"$out/lib.files")"
! grep -q '^E: ' "$out/lintian.txt" || fail "lintian errors"
echo "PASS: packages $v; lintian: $(grep -c '^W: ' "$out/lintian.txt" || true) warnings, no errors"
