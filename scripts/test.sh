#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fresh machine -> every test: install packages, build, run ctest.
# Root is needed (packages, BPF).  With CI=true, a BPF/root test that cannot
# run fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure --timeout 600 "$@"
