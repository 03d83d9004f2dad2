#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerates docs/screenshots/: heapscope's profiles drawn by
# flamegraph.pl and by speedscope, captured with headless chromium
# (issue 17, "How it will be checked"):
#   flamegraph_cxx_heap.png   `heapscope record` folded heap of names_target
#                             (C++, -O2 -g) in flamegraph.pl
#   speedscope_cxx_heap.png   the same process's pprof heap in speedscope
#   flamegraph_lifetime.png   `record --profile lifetime` folded of
#                             lifetime_target in flamegraph.pl
#   speedscope_lifetime.png   the same lifetime profile in speedscope
# and the profiles they were drawn from (*.folded, *.pb.gz).
# Needs: root (record attaches BPF), a build ($BUILD_DIR, default build),
# chromium and flamegraph.pl (scripts/bootstrap.sh: chromium,
# libdevel-nytprof-perl, whose Devel/NYTProf/flamegraph.pl is Brendan
# Gregg's script), npm once (speedscope's static build, `npm pack`, cached
# in $BUILD_DIR/screenshots-cache).  Nothing leaves the machine besides
# that npm download; the pages are opened from file://.
# usage: scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=docs/screenshots
SPEEDSCOPE=speedscope@1.25.0
HS=$BUILD_DIR/collector/heapscope
LIB=$PWD/$BUILD_DIR/allocator/libheapscope.so
NAMES=$BUILD_DIR/tests/names_target
LIFETIME=$BUILD_DIR/tests/lifetime_target
FLAMEGRAPH=${FLAMEGRAPH:-$(command -v flamegraph.pl ||
	echo /usr/share/perl5/Devel/NYTProf/flamegraph.pl)}

die() { echo "screenshots: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (heapscope record attaches BPF)"
for f in "$HS" "$LIB" "$NAMES" "$LIFETIME"; do
	[ -e "$f" ] || die "$f missing: build first (scripts/build.sh)"
done
[ -r "$FLAMEGRAPH" ] || die "flamegraph.pl missing (apt-get install libdevel-nytprof-perl)"
command -v chromium >/dev/null || die "chromium missing (apt-get install chromium)"

cache=$PWD/$BUILD_DIR/screenshots-cache
if [ ! -f "$cache/package/dist/release/index.html" ]; then
	command -v npm >/dev/null || die "npm missing (for $SPEEDSCOPE)"
	mkdir -p "$cache"
	(cd "$cache" && npm pack --silent "$SPEEDSCOPE" >/dev/null && tar xzf speedscope-*.tgz) ||
		die "npm pack $SPEEDSCOPE failed"
fi
speedscope=$cache/package/dist/release/index.html

work=$(mktemp -d)
tpid=""
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$OUT"

wait_line() { # file regex
	for _ in $(seq 1 200); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	die "target did not print '$2': $(cat "$1")"
}

# png url width height: a headless chromium screenshot
shot() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$work/chrome" --window-size="$3,$4" \
		--virtual-time-budget=10000 --screenshot="$1" "$2" \
		>"$work/chrome.log" 2>&1 || die "chromium failed: $(tail -3 "$work/chrome.log")"
	[ -s "$1" ] || die "chromium wrote no $1"
	echo "screenshots: $1"
}

# png folded title countname: flamegraph.pl's SVG, as tall as it draws
flamegraph() {
	local svg=$work/$(basename "$1" .png).svg h
	perl "$FLAMEGRAPH" --title "$3" --countname "$4" --colors mem "$2" >"$svg"
	h=$(sed -n 's/.*<svg [^>]*height="\([0-9]*\)".*/\1/p' "$svg" | head -1)
	shot "$1" "file://$svg" 1200 "${h:-400}"
}

# png profile height: speedscope showing profile (loaded as speedscope's
# own CLI does: a script calling speedscope.loadFileFromBase64)
speedscope() {
	local js=$work/$(basename "$1" .png).js
	printf 'speedscope.loadFileFromBase64("%s", "%s")\n' "$(basename "$2")" \
		"$(base64 -w0 "$2")" >"$js"
	shot "$1" "file://$speedscope#localProfilePath=$js" 1200 "$3"
}

# 1. a C++ program's live heap
HEAPSCOPE_SAMPLE_RATE=65536 HEAPSCOPE_SAMPLE_SEED=1 LD_PRELOAD=$LIB "$NAMES" \
	>"$work/names.out" 2>&1 &
tpid=$!
wait_line "$work/names.out" '^ready'
"$HS" record -p "$tpid" -d 1 --force -o "$OUT/cxx_heap.folded" 2>"$work/rec.err" ||
	die "record: $(cat "$work/rec.err")"
"$HS" record -p "$tpid" -d 1 --force --format pprof -o "$OUT/cxx_heap.pb.gz" \
	2>"$work/rec.err" || die "record: $(cat "$work/rec.err")"
kill "$tpid"
wait "$tpid" 2>/dev/null || true
tpid=""
flamegraph "$OUT/flamegraph_cxx_heap.png" "$OUT/cxx_heap.folded" \
	"heapscope record: live heap of names_target (C++, -O2 -g)" bytes
speedscope "$OUT/speedscope_cxx_heap.png" "$OUT/cxx_heap.pb.gz" 360

# 2. a lifetime profile (lifetime_target starts once a collector attaches)
HEAPSCOPE_SAMPLE_RATE=1 LD_PRELOAD=$LIB "$LIFETIME" >"$work/life.out" 2>&1 &
tpid=$!
sleep 0.3
"$HS" record -p "$tpid" --profile lifetime -d 6 --force -o "$OUT/lifetime.folded" \
	2>"$work/rec.err" || die "record --profile lifetime: $(cat "$work/rec.err")"
kill "$tpid"
wait "$tpid" 2>/dev/null || true
tpid=""
flamegraph "$OUT/flamegraph_lifetime.png" "$OUT/lifetime.folded" \
	"heapscope record --profile lifetime: lifetime_target" objects
speedscope "$OUT/speedscope_lifetime.png" "$OUT/lifetime.folded" 360
