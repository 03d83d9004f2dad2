#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# package.sh [BUILD_DIR] - the Debian packages: configures BUILD_DIR
# (default build-deb) for the prefix /usr, builds, runs `cpack -G DEB`
# (cmake/package.cmake) and lintian on the three packages, and prints each
# package's control fields.  Exits non-zero when lintian reports an error
# (E:).  The packages are left in BUILD_DIR:
#   apt-get install ./build-deb/*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${BUILD_DIR:-build-deb}}
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_INSTALL_PREFIX=/usr -DHEAPSCOPE_BUILD_TESTS=OFF >/dev/null
cmake --build "$out" -j"$(nproc)" >/dev/null
rm -f "$out"/*.deb
(cd "$out" && cpack -G DEB >/dev/null)
debs=("$out"/*.deb)
[ ${#debs[@]} -eq 3 ] || { echo "package.sh: expected 3 packages, got: ${debs[*]}" >&2; exit 1; }
for d in "${debs[@]}"; do
	echo "== $(basename "$d")"
	dpkg-deb -f "$d" Package Version Architecture Section Priority Depends Recommends
done
if ! command -v lintian >/dev/null; then
	echo "package.sh: lintian missing (apt-get install lintian; scripts/bootstrap.sh)" >&2
	exit 1
fi
echo "== lintian"
lintian --tag-display-limit 0 "${debs[@]}" | tee "$out/lintian.txt" || true
if grep -q '^E: ' "$out/lintian.txt"; then
	echo "package.sh: lintian reports errors" >&2
	exit 1
fi
echo "package.sh: $(grep -c '^W: ' "$out/lintian.txt" || true) lintian warnings, no errors; packages in $out"
