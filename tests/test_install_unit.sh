#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_install_unit.sh BUILD_DIR PREFIX - `systemd-analyze verify` of the
# installed systemd unit, with the installed paths: the tree is installed
# into a DESTDIR that, with a copy of this host's unit directory (the
# targets it depends on) and kill(1), serves as --root, so verify resolves
# ExecStart= to the installed heapscope; MANPATH lets it find the
# Documentation= man page.  Any message from verify fails the test (a bad
# setting is only a warning there).  Exit 77 = skip (no systemd-analyze), a
# failure when CI=true.
set -euo pipefail
build=$1 prefix=$2
skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
command -v systemd-analyze >/dev/null ||
	skip "no systemd-analyze (apt-get install systemd; scripts/bootstrap.sh)"
command -v man >/dev/null || skip "no man (apt-get install man-db; scripts/bootstrap.sh)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
R=$work/root
DESTDIR=$R cmake --install "$build" >"$work/install.log" 2>&1 ||
	{ echo "FAIL: cmake --install: $(tail -5 "$work/install.log")"; exit 1; }
unit=$prefix/lib/systemd/system/heapscope.service
[ -f "$R$unit" ] || { echo "FAIL: $unit not installed"; exit 1; }
sysunits=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
mkdir -p "$R/usr/lib/systemd" "$R/usr/bin"
cp -a "$sysunits/." "$R/usr/lib/systemd/system/"
ln -s usr/lib "$R/lib" 2>/dev/null || true
cp "$(type -P kill)" "$R/usr/bin/kill"
ln -s usr/bin "$R/bin" 2>/dev/null || true
echo "systemd-analyze verify --root=DESTDIR $unit:"
rc=0
MANPATH=$R$prefix/share/man systemd-analyze verify --root="$R" "$unit" >"$work/out" 2>&1 || rc=$?
cat "$work/out"
[ $rc -eq 0 ] || { echo "FAIL: systemd-analyze verify exit $rc"; exit 1; }
[ ! -s "$work/out" ] || { echo "FAIL: systemd-analyze verify printed messages"; exit 1; }
grep -q "^ExecStart=$prefix/bin/heapscope daemon " "$R$unit" ||
	{ echo "FAIL: ExecStart is not the installed binary: $(grep ^ExecStart= "$R$unit")"; exit 1; }
grep '^ExecStart=.*--lib' "$R$unit" &&
	{ echo "FAIL: the unit passes --lib"; exit 1; }
echo "PASS: systemd-analyze verify: no messages, exit 0"
