#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs, idempotently and as root, every Debian package that heapscope's
# build, tests and demo need. Safe to run repeatedly.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config clang llvm libclang-rt-14-dev
  libbpf-dev libelf-dev libdw-dev zlib1g-dev bpftool libiberty-dev
  libcmocka-dev systemtap-sdt-dev libmicrohttpd-dev
  libdebuginfod1 libdebuginfod-dev debuginfod
  sqlite3 python3 bash coreutils procps util-linux golang-go curl
  prometheus
  libpython3.11-testsuite
  systemd man-db lintian file dpkg-dev
  # scripts/screenshots.sh: headless chromium; flamegraph.pl ships in
  # Devel::NYTProf (Debian 12 has no flamegraph package)
  chromium libdevel-nytprof-perl
)

if [ "$(id -u)" -ne 0 ]; then
  echo "bootstrap: must run as root (apt-get install): run it in a root shell" >&2
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "bootstrap: all packages present"
