#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/real_programs.sh: the git workload. Imports a generated history
# (fast-import), checks it out, writes every commit's patch, repacks with
# delta compression, verifies the objects and blames a file. stdout (patches,
# blame, object list) is what is compared between allocators; pack files are
# not (their byte order depends on thread timing).
# usage: git_workload.sh STREAM WORKDIR
set -euo pipefail
stream=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
export HOME=$work GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
cd "$work"
git init -q -b main repo
cd repo
git fast-import --quiet <"$stream"
git checkout -q main
git log -p --stat --format='%H %s' main
git repack -adfq --window=30 --depth=50
git fsck --no-progress --no-dangling
git blame -s src/f000.txt
git rev-list --objects --all | sort
