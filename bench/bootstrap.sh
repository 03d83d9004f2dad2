#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs, idempotently and as root, the Debian packages the benchmark suite
# needs: the peer allocators, the real programs it preloads (run.sh's sqlite3,
# python3, redis; real_programs.sh's sort, gawk, jq, xmllint, xsltproc, gcc,
# git, perl, python3, lua5.4, ruby, g++, cppcheck, dot, groff), gnuplot for
# the plots, valgrind (callgrind, cachegrind) and perf for instruction
# counts, and the compilers (also for mimalloc_bench.sh).
set -euo pipefail

PKGS=(
  build-essential cmake
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
  gnuplot-nox valgrind linux-perf sqlite3 python3 redis-tools binutils procps
  coreutils gawk jq libxml2-utils xsltproc git
  perl lua5.4 ruby g++ cppcheck graphviz groff-base
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench/bootstrap: missing ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  echo "bench/bootstrap: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "bench/bootstrap: all packages present" >&2
