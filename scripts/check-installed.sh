#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-installed.sh [--keep] - issue 16's "How it will be checked", on
# this machine, as root: the packages built from a fresh clone of this
# repository's HEAD (scripts/package.sh, which runs lintian), installed
# with apt-get, then only installed paths used: the library (preloaded
# by its soname), pkg-config (a program built against it), the man pages,
# the unit (systemd-analyze verify), and the daemon without --lib,
# followed through every endpoint and parameter with curl, go tool pprof
# and a real Prometheus (http_sd_configs on /targets).  Prints each
# command before its output; exits non-zero at the first check that
# fails.  The packages are purged at the end unless --keep.
# Nothing is sent anywhere but 127.0.0.1.
set -euo pipefail
keep=false
[ "${1:-}" = --keep ] && keep=true
[ "$(id -u)" -eq 0 ] || { echo "check-installed.sh: run as root (apt-get, BPF)" >&2; exit 1; }
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/hs-installed.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if ! $keep && dpkg -s heapscope >/dev/null 2>&1; then
		run apt-get purge -y -q -o DPkg::Lock::Timeout=600 heapscope libheapscope-dev libheapscope1 >/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
run() { echo "\$ $*"; "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
export HOME=$work PPROF_TMPDIR=$work GOCACHE=$work/gocache

echo "== build the packages from a fresh clone ($(git -C "$src" rev-parse --short HEAD))"
run git clone -q "$src" "$work/src"
run "$work/src/scripts/package.sh" "$work/deb"
rm -rf "$work/src" # from here on, nothing of the tree

echo "== install with apt"
cd "$work"
run apt-get install -y -q -o DPkg::Lock::Timeout=600 "$work"/deb/*.deb >apt.log 2>&1 || { cat apt.log; fail "apt-get install"; }
tail -4 apt.log
run dpkg-query -W heapscope libheapscope1 libheapscope-dev

echo "== the library"
run ldconfig -p | grep 'libheapscope\.so'
run readelf -d /usr/lib/x86_64-linux-gnu/libheapscope.so.1 | grep -E 'SONAME|NEEDED'

echo "== pkg-config"
run pkg-config --modversion heapscope
run pkg-config --cflags --libs heapscope
cat >hold.c <<'EOF'
#include <heapscope/heapscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 64 MiB in 64 KiB blocks from one function, then sleep. */
__attribute__((noinline)) static void hold(void **b, int n)
{
	for (int i = 0; i < n; i++) {
		b[i] = malloc(65536);
		memset(b[i], 1, 65536);
	}
}

int main(void)
{
	static void *b[1024];

	hold(b, 1024);
	printf("ready %d period %lld\n", (int)getpid(),
	       (long long)heapscope_get_sample_period());
	fflush(stdout);
	for (;;)
		pause();
}
EOF
# shellcheck disable=SC2046
run cc -O1 -g -fno-omit-frame-pointer -o hold hold.c $(pkg-config --cflags --libs heapscope)
run ldd ./hold | grep heapscope

echo "== man pages"
run man -w heapscope heapscope-daemon heapscope-record heapscope-rate
run man -w 7 libheapscope
run man heapscope-daemon 2>/dev/null | sed -n '1,6p'
run man 7 libheapscope 2>/dev/null | sed -n '1,6p'

echo "== the unit"
run systemd-analyze verify /usr/lib/systemd/system/heapscope.service && echo "systemd-analyze verify: exit 0"

echo "== the daemon without --lib"
run heapscope --version
port=$((10000 + RANDOM % 20000))
# --no-copies: only the installed library's processes, not other copies
# of it (a build tree's, whose tests may run on this machine meanwhile)
echo "\$ heapscope daemon --no-copies --listen 127.0.0.1:$port &"
heapscope daemon --no-copies --listen 127.0.0.1:$port 2>daemon.err &
pids+=($!)
for _ in $(seq 1 200); do grep -q 'listening on' daemon.err && break; sleep 0.05; done
cat daemon.err
URL=http://127.0.0.1:$port
HEAPSCOPE_SAMPLE_RATE=65536 ./hold >hold.out &
pids+=($!)
# a program of the system, preloaded by soname
HEAPSCOPE_SAMPLE_RATE=65536 LD_PRELOAD=libheapscope.so.1 python3 -c '
import os, sys, time
keep = [bytearray(65536) for _ in range(512)]
print("ready", os.getpid(), flush=True)
time.sleep(3600)' >py.out &
pids+=($!)
for _ in $(seq 1 200); do grep -q ready hold.out && grep -q ready py.out && break; sleep 0.05; done
H=$(awk '{print $2; exit}' hold.out) P=$(awk '{print $2; exit}' py.out)
echo "hold: $(cat hold.out); python3: $(cat py.out)"
sleep 1

code() { curl -s -o body -w '%{http_code}' --max-time 20 "$URL$1"; }
expect() { # path status
	local c
	c=$(code "$1")
	echo "GET $1 -> $c ($(wc -c <body) bytes)"
	[ "$c" = "$2" ] || fail "GET $1: $c, want $2: $(head -c 200 body)"
}
for q in / /debug/pprof/ /targets /processes /metrics "/metrics?pid=$H" \
	"/debug/pprof/heap?pid=$H" "/debug/pprof/heap?pid=$H&debug=1" \
	"/debug/pprof/heap?pid=$H&format=folded" "/debug/pprof/heap?pid=$H&format=text" \
	"/debug/pprof/heap?comm=hold" "/debug/pprof/heap?pid=$H&seconds=1" \
	"/debug/pprof/allocs?pid=$P" "/debug/pprof/allocs?pid=$P&seconds=1" \
	"/debug/pprof/allocs?pid=$P&window=1" "/debug/pprof/allocs?pid=$P&debug=1" \
	/debug/pprof/heap /debug/pprof/allocs "/debug/pprof/heap?format=folded" \
	"/debug/pprof/heap?debug=1" "/debug/pprof/allocs?seconds=1"; do
	expect "$q" 200
done
for q in "/debug/pprof/heap?pid=abc" "/debug/pprof/allocs?window=1" \
	"/debug/pprof/heap?pid=$H&debug=7"; do
	expect "$q" 400
done
expect "/debug/pprof/heap?pid=$$" 404
grep -q "\"pid\": \"$H\"" <(curl -s "$URL/targets") || fail "/targets lacks $H"
grep -q "\"pid\": \"$P\"" <(curl -s "$URL/targets") || fail "/targets lacks $P"
run curl -s "$URL/debug/pprof/heap?format=folded" >folded.txt
cut -c1-150 folded.txt | sed -n '1,6p'
grep -q "^hold ($H);" folded.txt && grep -q "^python3 ($P);" folded.txt ||
	fail "folded host profile lacks the 'COMM (PID)' frames of $H and $P"
run go tool pprof -top -sample_index=inuse_space "$URL/debug/pprof/heap?pid=$H" >top.txt 2>&1
sed -n '1,16p' top.txt
grep -q ' hold$' top.txt || fail "go tool pprof -top: no hold frame"
run go tool pprof -tags "$URL/debug/pprof/heap" >tags.txt 2>&1
grep -v '^ *$' tags.txt
grep -q "$H" tags.txt && grep -q "$P" tags.txt || fail "host profile tags lack $H or $P"

if command -v prometheus >/dev/null; then
	echo "== Prometheus, http_sd_configs on /targets"
	cat >prometheus.yml <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: heapscope
    metrics_path: /metrics
    http_sd_configs:
      - url: $URL/targets
        refresh_interval: 1s
YML
	pport=$((10000 + RANDOM % 20000))
	prometheus --config.file=prometheus.yml --storage.tsdb.path=tsdb \
		--web.listen-address=127.0.0.1:$pport >prom.log 2>&1 &
	pids+=($!)
	up=0
	for _ in $(seq 1 150); do
		up=$(curl -s "http://127.0.0.1:$pport/api/v1/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
print(sum(1 for x in t if x["health"] == "up"))' 2>/dev/null || echo 0)
		[ "$up" -ge 2 ] && break
		sleep 0.2
	done
	curl -s "http://127.0.0.1:$pport/api/v1/targets" | python3 -c '
import json, sys
for x in json.load(sys.stdin)["data"]["activeTargets"]:
    print(x["health"], x["scrapeUrl"], x["labels"].get("comm"))'
	[ "$up" -ge 2 ] || fail "Prometheus: $up targets up"
fi
echo "PASS: installed packages: library, pkg-config, man pages, unit, daemon without --lib"
