#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Leak trends end to end (root, BPF): leak_target has a leaking site
# (1.25 MiB/s), a stable 64 MiB block and a churning 32 MiB ring, sampled
# at T = 512 KiB with a fixed seed.
#   test_leaks.sh record HEAPSCOPE LIB TARGET   heapscope leaks -d 20
#   test_leaks.sh daemon HEAPSCOPE LIB TARGET   the daemon's
#                 /debug/heapscope/leaks?pid=N 20 s after it started
#                 (--leak-interval 1), and its 400 / 404 answers, 403
#                 to another user over a unix socket
#   (record also checks the one-line errors of a bad -d and a gone pid)
# Both assert: leak_site ranks first and is growing, its growth within 4
# of its reported standard errors of the true 1310720 B/s, its oldest live
# object about the window old; stable_site and ring_site are not growing,
# hold 64 MiB (-5 T .. +T: one sample's weight) and 32 MiB (5 sigma,
# sigma = sqrt(T * 32 MiB)), and the ring's objects are young (< 6 s).
# Exit 77 = skip (not root / no BPF / no python3 or curl), a failure when
# CI=true.
set -u
MODE=$1 HEAPSCOPE=$2 LIB=$3 TARGET=$4
T=524288

. "$(dirname "$0")/lib.sh"
hs_need_bpf
hs_need_cmd python3 python3
hs_need_cmd curl curl

work=$(mktemp -d)
chmod 755 "$work" # the unix socket's directory, for user nobody
tpid="" dpid=""
cleanup() {
	[ -n "$tpid" ] && kill -9 "$tpid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$work"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
	exit 1
}

HEAPSCOPE_SAMPLE_RATE=$T HEAPSCOPE_SAMPLE_SEED=7 LD_PRELOAD=$LIB \
	"$TARGET" 120 >"$work/target.out" 2>"$work/target.err" &
tpid=$!
for _ in $(seq 1 200); do
	grep -q '^ready' "$work/target.out" 2>/dev/null && break
	sleep 0.05
done
grep -q '^ready' "$work/target.out" || fail "target did not become ready"

case $MODE in
record)
	# one-line errors: a bad duration (2), a pid that has exited (1)
	"$HEAPSCOPE" leaks -p "$tpid" -d 0 >"$work/out" 2>"$work/bad.err"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$work/bad.err")" = 2 ] && [ ! -s "$work/out" ] &&
		grep -q "^heapscope leaks: invalid duration '0'" "$work/bad.err" ||
		fail "-d 0: exit $rc, $(cat "$work/bad.err")"
	sh -c 'exit 0' & gone=$!
	wait $gone
	"$HEAPSCOPE" leaks -p $gone -d 2 >"$work/out" 2>"$work/gone.err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$work/gone.err")" = 1 ] && [ ! -s "$work/out" ] &&
		grep -q "^heapscope leaks: no process $gone" "$work/gone.err" ||
		fail "vanished pid: exit $rc, $(cat "$work/gone.err")"
	rm -f "$work/bad.err" "$work/gone.err"
	"$HEAPSCOPE" leaks -p "$tpid" -d 20 >"$work/leaks.json" 2>"$work/leaks.err" ||
		fail "heapscope leaks failed"
	;;
daemon)
	hs_start_daemon "$work/daemon.err" --lib "$LIB" --no-copies \
		--listen "unix:$work/http.sock" --leak-interval 1
	PORT=$port
	URL=http://127.0.0.1:$PORT/debug/heapscope/leaks
	code=$(curl -s -o "$work/body" -w '%{http_code}' "$URL")
	[ "$code" = 400 ] || fail "no pid: HTTP $code, want 400"
	code=$(curl -s -o "$work/body" -w '%{http_code}' "$URL?pid=abc")
	[ "$code" = 400 ] || fail "pid=abc: HTTP $code, want 400"
	code=$(curl -s -o "$work/body" -w '%{http_code}' "$URL?pid=$$")
	[ "$code" = 404 ] || fail "pid of the shell (no heapscope): HTTP $code, want 404"
	# another user over the unix socket may not read root's target
	if command -v setpriv >/dev/null; then
		nobody=$(id -u nobody)
		code=$(setpriv --reuid=$nobody --regid=$nobody --clear-groups \
			curl -s -o /dev/null -w '%{http_code}' --unix-socket "$work/http.sock" \
			"http://localhost/debug/heapscope/leaks?pid=$tpid")
		[ "$code" = 403 ] || fail "nobody reads root's process: HTTP $code, want 403"
		echo "ok:   403 for another user over the unix socket"
	fi
	sleep 20
	code=$(curl -s -o "$work/leaks.json" -w '%{http_code}' "$URL?pid=$tpid")
	[ "$code" = 200 ] || fail "leaks?pid=$tpid: HTTP $code: $(cat "$work/leaks.json")"
	;;
*)
	fail "unknown mode $MODE"
	;;
esac
kill -0 "$tpid" 2>/dev/null || fail "target exited early: $(cat "$work/target.err")"

python3 - "$work/leaks.json" "$tpid" "$T" <<'PY' || fail "leak ranking wrong (above)"
import json, math, sys
doc = json.load(open(sys.argv[1]))
pid, T = int(sys.argv[2]), int(sys.argv[3])
MiB = 1 << 20
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok &= bool(cond)
print("window %.1f s, %d stacks" % (doc["window_seconds"], len(doc["stacks"])))
for s in doc["stacks"][:5]:
    print("  %-12s G %10.0f B/s +- %8.0f  t %6.2f  inuse %10.0f  oldest %6.1f s  growing %s"
          % (s["stack"].split(";")[-1], s["growth_bytes_per_second"],
             s["growth_stderr_bytes_per_second"], s["t"], s["inuse_bytes"],
             s["oldest_live_age_seconds"], s["growing"]))
check(doc["pid"] == pid, "pid %d" % doc["pid"])
check(doc["window_seconds"] >= 18, "window %.1f s >= 18" % doc["window_seconds"])
def site(leaf):
    rows = [s for s in doc["stacks"] if s["stack"].split(";")[-1] == leaf]
    check(len(rows) == 1, "one %s row" % leaf)
    return rows[0] if rows else None
leak, stable, ring = site("leak_site"), site("stable_site"), site("ring_site")
if not (leak and stable and ring):
    sys.exit(1)
check(doc["stacks"][0] is leak, "leak_site ranks first")
check(leak["growing"], "leak_site is growing (t %.2f)" % leak["t"])
truth = 1.25 * MiB
se = leak["growth_stderr_bytes_per_second"]
check(abs(leak["growth_bytes_per_second"] - truth) <= 4 * se,
      "leak growth %.0f within 4 se (%.0f) of %.0f" % (leak["growth_bytes_per_second"], 4 * se, truth))
check(leak["oldest_live_age_seconds"] >= 0.8 * doc["window_seconds"],
      "leak's oldest object %.1f s >= 0.8 * window" % leak["oldest_live_age_seconds"])
check(not stable["growing"], "stable_site not growing (t %.2f)" % stable["t"])
# a block of k >> T bytes weighs k + T - f, f the sampler's remaining
# count (exponential, mean T, below k): within 64 MiB - 5 T .. + T
check(64 * MiB - 5 * T <= stable["inuse_bytes"] <= 64 * MiB + T,
      "stable_site holds %.0f (64 MiB - 5 T .. + T)" % stable["inuse_bytes"])
check(not ring["growing"], "ring_site not growing (t %.2f)" % ring["t"])
sig = math.sqrt(T * 32 * MiB)
check(abs(ring["inuse_bytes"] - 32 * MiB) <= 5 * sig,
      "ring_site holds %.0f (32 MiB +- %.0f)" % (ring["inuse_bytes"], 5 * sig))
check(ring["oldest_live_age_seconds"] < 6, "ring's oldest object %.1f s < 6" % ring["oldest_live_age_seconds"])
sys.exit(0 if ok else 1)
PY
echo PASS
