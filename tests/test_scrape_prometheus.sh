#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_scrape_prometheus.sh HEAPSCOPE LIB HOLD - issue 16 item 8: a real
# Prometheus, configured with nothing but http_sd_configs pointing at the
# daemon's /targets, scrapes /metrics?pid=N of every followed process.
# Two hold_100mib targets run with LIB preloaded; the test checks
#   - /targets is valid JSON whose labels (pid, comm, exe, cgroup) equal
#     what /proc says of each target, and whose target is HOST:PORT of
#     this daemon;
#   - /metrics?pid=N holds only that pid's samples; bad or unknown pid ->
#     400 / 404;
#   - Prometheus's /api/v1/targets lists both pids with health "up" and a
#     scrape URL carrying pid=N (waits at most 60 s).
# Everything listens on 127.0.0.1.  Exit 77 = skip (not root / no BPF /
# no prometheus), a failure when CI=true.
set -u
HEAPSCOPE=$1 LIB=$2 HOLD=$3
. "$(dirname "$0")/lib.sh"
hs_need_bpf
hs_need_cmd curl curl
hs_need_cmd python3 python3
command -v prometheus >/dev/null ||
	skip "prometheus missing (apt-get install prometheus; scripts/bootstrap.sh)"

work=$(mktemp -d)
dpid="" ppid_="" tpids=()
cleanup() {
	for p in "${tpids[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -n "$ppid_" ] && kill "$ppid_" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- daemon log"; tail -20 "$work/daemon.err" 2>/dev/null
	echo "--- prometheus log"; tail -20 "$work/prom.log" 2>/dev/null
	exit 1
}

for i in 1 2; do
	HEAPSCOPE_SAMPLE_RATE=65536 LD_PRELOAD=$LIB "$HOLD" >"$work/t$i.out" 2>&1 &
	tpids+=($!)
done
for i in 1 2; do
	for _ in $(seq 1 200); do
		grep -q '^ready' "$work/t$i.out" && break
		sleep 0.05
	done
	grep -q '^ready' "$work/t$i.out" || fail "target $i not ready"
done

hs_start_daemon "$work/daemon.err" --lib "$LIB" --no-copies
PORT=$port

# Both targets followed (the daemon finds running processes at start).
for _ in $(seq 1 100); do
	curl -sf "$URL/targets" >"$work/targets.json" || true
	n=0
	for p in "${tpids[@]}"; do grep -q "\"pid\": \"$p\"" "$work/targets.json" && n=$((n + 1)); done
	[ "$n" -eq 2 ] && break
	sleep 0.1
done
[ "$n" -eq 2 ] || fail "/targets lacks the targets: $(cat "$work/targets.json")"
[ "$(curl -s -o /dev/null -w '%{content_type}' "$URL/targets")" = application/json ] ||
	fail "/targets is not application/json"

# Labels against /proc, computed here independently of the daemon.
python3 - "$work/targets.json" "127.0.0.1:$PORT" "${tpids[@]}" <<'PY' || fail "/targets content"
import json, os, sys
groups = json.load(open(sys.argv[1]))
host = sys.argv[2]
by_pid = {g["labels"]["pid"]: g for g in groups}
for pid in sys.argv[3:]:
    g = by_pid[pid]
    assert g["targets"] == [host], g
    lab = g["labels"]
    assert lab["__param_pid"] == pid, lab
    assert lab["comm"] == open(f"/proc/{pid}/comm").read().rstrip("\n"), lab
    assert lab["exe"] == os.readlink(f"/proc/{pid}/exe"), lab
    cg = ""
    for line in open(f"/proc/{pid}/cgroup"):
        if line.startswith("0::"):
            cg = line[3:].rstrip("\n")
    assert lab["cgroup"] == cg, (lab, cg)
    assert ("systemd_unit" in lab) == any(
        s.endswith(".service") and len(s) > 8 for s in cg.split("/")), lab
    print(f"ok: /targets group of {pid}: {json.dumps(lab)}")
PY
# The Host header is echoed when sane, and replaced by --listen when not.
curl -sf -H 'Host: localhost:'$PORT "$URL/targets" | grep -q "\"localhost:$PORT\"" ||
	fail "Host header not used"
curl -sf -H 'Host: ev"il:1' "$URL/targets" | grep -q "\"127.0.0.1:$PORT\"" ||
	fail "bad Host header not replaced by the listen address"
echo "ok: Host header used when valid, --listen otherwise"

# /metrics?pid=N: only that process's samples.
p0=${tpids[0]} p1=${tpids[1]}
curl -sf "$URL/metrics?pid=$p0" >"$work/m0" || fail "/metrics?pid=$p0"
grep -q "^heapscope_process_sampled_bytes{pid=\"$p0\"" "$work/m0" || fail "no samples of $p0"
grep -q "pid=\"$p1\"" "$work/m0" && fail "/metrics?pid=$p0 has samples of $p1"
grep -q '^heapscope_events_total' "$work/m0" && fail "/metrics?pid=$p0 has daemon-wide counters"
curl -sf "$URL/metrics" | grep -q "pid=\"$p1\"" || fail "/metrics lacks $p1"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics?pid=abc")" = 400 ] || fail "pid=abc not 400"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics?pid=0")" = 400 ] || fail "pid=0 not 400"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics?pid=2147483647")" = 404 ] || fail "unfollowed pid not 404"
echo "ok: /metrics?pid= filters, 400 and 404"

# A real Prometheus: only http_sd_configs, 1 s intervals, temp storage.
cat >"$work/prometheus.yml" <<YML
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
promtool check config "$work/prometheus.yml" >/dev/null 2>&1 ||
	{ command -v promtool >/dev/null && fail "promtool rejects the config"; }
for _try in 1 2 3 4 5; do
	PPORT=$((10000 + RANDOM % 20000))
	prometheus --config.file="$work/prometheus.yml" \
		--storage.tsdb.path="$work/tsdb" \
		--web.listen-address=127.0.0.1:$PPORT >"$work/prom.log" 2>&1 &
	ppid_=$!
	for _ in $(seq 1 100); do
		curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null && break 2
		kill -0 "$ppid_" 2>/dev/null || break
		sleep 0.2
	done
	kill "$ppid_" 2>/dev/null; wait "$ppid_" 2>/dev/null; ppid_=""
	grep -q 'address already in use' "$work/prom.log" || break
done
[ -n "$ppid_" ] || fail "prometheus did not start"

ok=0
for _ in $(seq 1 60); do
	curl -sf "http://127.0.0.1:$PPORT/api/v1/targets?state=active" >"$work/api.json" || true
	if python3 - "$work/api.json" "$PORT" "${tpids[@]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
port = sys.argv[2]
act = d["data"]["activeTargets"]
for pid in sys.argv[3:]:
    t = [a for a in act if a["labels"].get("pid") == pid]
    if len(t) != 1 or t[0]["health"] != "up":
        sys.exit(1)
    assert t[0]["scrapeUrl"] == f"http://127.0.0.1:{port}/metrics?pid={pid}", t[0]
    assert t[0]["labels"]["job"] == "heapscope", t[0]
PY
	then ok=1; break; fi
	sleep 1
done
[ "$ok" = 1 ] || fail "prometheus targets not up: $(head -c 2000 "$work/api.json")"
echo "ok: prometheus scrapes both targets, health up"
# And the scraped series reached its storage, labelled by the target.
curl -sf "http://127.0.0.1:$PPORT/api/v1/query" \
	--data-urlencode "query=heapscope_process_live_samples{pid=\"$p0\"}" |
	grep -q "\"pid\":\"$p0\"" || fail "no stored series for $p0"
echo "ok: series stored for pid $p0"
echo PASS
