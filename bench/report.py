# SPDX-License-Identifier: MIT
"""Turns one benchmark run (its tmp directory) into the results: a markdown
table (<out>.md), the raw per-run data (<out>.tsv) and a plot of time and
peak RSS ratios (<out>.png). For bench/run.sh also a plot of RSS over time in
the memory-return test (<out>-memory.png); with --family, the report of one
family of programs run from outside (bench/mimalloc_bench.sh,
bench/real_programs.sh: meta.txt names the family). Reports only: the targets
are stated as met or not met, never asserted.

usage: report.py [--family] --dir RESULTS_TMP_DIR --out RESULTS_PREFIX
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess

PEERS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
HS, HS_OFF = "heapscope", "heapscope-off"
ORDER = PEERS + [HS_OFF, HS]
RUNSH_PROGRAMS = {"sqlite3", "python3", "redis"}  # bench/run.sh rows that are not synthetic
# Issue 19's targets per family: geo mean of time / best peer, worst program.
FAMILY_TARGETS = {
    "mimalloc-bench": {"title": "mimalloc-bench, the field's suite", "geo": 0.97, "worst": 1.10,
                       "script": "bench/mimalloc_bench.sh"},
    "real-programs": {"title": "Real programs (unmodified Debian packages)", "geo": 0.98,
                      "worst": 1.05, "script": "bench/real_programs.sh"},
}
OFF_TARGET = 1.005  # the default period within 0.5 % of sampling off, in each family's geo mean


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt(x, nd=3):
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{nd}f}"


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    return meta


def collect(raw, timeout, by_threads=True):
    """(workload, threads) -> allocator -> {wall, rss, fails, t, m, lb}.
    The time of a run is its time_s column where the raw data has one (a
    program's own figure, e.g. a relative time made from its throughput),
    else wall_s. A cell whose every run timed out gets t = the timeout and
    lb = True: a lower bound, so it still counts (favourably) in the ratios.
    Rows are ordered by thread count, then by first appearance, unless
    by_threads is False (first appearance only)."""
    cells, order = {}, []
    for r in raw:
        key = (r["workload"], int(r["threads"]))
        if key not in cells:
            cells[key] = {}
            order.append(key)
        c = cells[key].setdefault(r["allocator"], {"wall": [], "rss": [], "fails": []})
        if r["status"] == "ok":
            c["wall"].append(float(r.get("time_s") or r["wall_s"]))
            c["rss"].append(int(r["maxrss_kib"]) / 1024.0)
        else:
            c["fails"].append(r["status"])
    for key in cells:
        for c in cells[key].values():
            c["t"] = statistics.median(c["wall"]) if c["wall"] else float("nan")
            c["m"] = statistics.median(c["rss"]) if c["rss"] else float("nan")
            c["lb"] = False
            if not c["wall"] and c["fails"] and all(f.startswith("timeout") for f in c["fails"]):
                c["t"], c["lb"] = timeout, True
    if by_threads:
        order.sort(key=lambda k: (k[1], 0))  # stable: thread count, then run order
    return cells, order


def best_peer(row, field):
    vals = [(row[p][field], p) for p in PEERS if p in row and math.isfinite(row[p][field])]
    return min(vals) if vals else (float("nan"), None)


def cell(c, field, best, nd):
    v = c[field]
    if field == "t" and c.get("lb"):
        return f"> {v:.0f} (> {v / best:.1f}) timeout" if math.isfinite(best) else f"> {v:.0f} timeout"
    if not math.isfinite(v):
        return "fail: " + ",".join(sorted(set(c["fails"]))) if c["fails"] else "n/a"
    s = f"{v:.{nd}f} ({v / best:.2f})" if math.isfinite(best) else f"{v:.{nd}f}"
    if c["fails"]:
        s += f" [{len(c['fails'])} failed: {','.join(sorted(set(c['fails'])))}]"
    return s


def table_by_alloc(cells, order, allocs, field, nd, unit, by_threads=True):
    """One table per thread count (or one for all rows), each with the geo
    mean of every allocator's ratios to the best peer of a row."""
    out = []
    groups = sorted({k[1] for k in order}) if by_threads else [None]
    for T in groups:
        if T is None:
            out.append(f"\n({unit}; in brackets: ratio to the best peer of that row, "
                       "best peer in bold)\n")
        else:
            out.append(f"\n**{T} thread{'s' if T > 1 else ''}** ({unit}; in brackets: "
                       "ratio to the best peer of that row, best peer in bold)\n")
        out.append(f"| {'workload' if by_threads else 'program'} | " + " | ".join(allocs) + " |")
        out.append("|---|" + "---:|" * len(allocs))
        ratios = {a: [] for a in allocs}
        for key in [k for k in order if T is None or k[1] == T]:
            row = cells[key]
            best, who = best_peer(row, field)
            cols = []
            for a in allocs:
                if a not in row:
                    cols.append("–")
                    continue
                s = cell(row[a], field, best, nd)
                cols.append(f"**{s}**" if a == who else s)
                if math.isfinite(row[a][field]) and math.isfinite(best):
                    ratios[a].append(row[a][field] / best)
            out.append(f"| {key[0]} | " + " | ".join(cols) + " |")
        out.append("| *geo mean of ratios* | " +
                   " | ".join(fmt(geomean(ratios[a]), 3) for a in allocs) + " |")
    return out


def ratio_geomeans(cells, keys, allocs, field):
    """allocator -> geo mean over keys of its value / the best peer's (rows
    where both are known)."""
    res = {}
    for a in allocs:
        rs = []
        for k in keys:
            best, _ = best_peer(cells[k], field)
            if a in cells[k] and math.isfinite(cells[k][a][field]) and math.isfinite(best):
                rs.append(cells[k][a][field] / best)
        res[a] = geomean(rs)
    return res


def heapscope_ratios(cells, order, allocs):
    """Per row: hs / best peer, hs / each peer, hs / hs-off (wall time)."""
    rows = []
    for key in order:
        row = cells[key]
        if HS not in row or not math.isfinite(row[HS]["t"]):
            continue
        hs = row[HS]["t"]
        best, who = best_peer(row, "t")
        r = {"key": key, "best": who, "vs_best": hs / best if who else float("nan"),
             "lb": row[HS]["lb"]}
        # A ratio of two timed-out cells (both lower bounds) means nothing.
        for p in PEERS:
            ok = p in row and math.isfinite(row[p]["t"]) and not (r["lb"] and row[p]["lb"])
            r[p] = hs / row[p]["t"] if ok else float("nan")
        off = row.get(HS_OFF, {"t": float("nan"), "lb": False})
        ok = math.isfinite(off["t"]) and not r["lb"] and not off["lb"]
        r["vs_off"] = hs / off["t"] if ok else float("nan")
        rows.append(r)
    return rows


def hs_vs_peers_lines(hsr, allocs, what, unit, threads=True):
    """Markdown: heapscope (default period) / each peer per row, and geo means."""
    md = [f"## heapscope (default period) against each peer ({unit}, < 1 is faster)", ""]
    peers = [p for p in PEERS if p in allocs]
    md.append(f"| {what} | " + ("threads | " if threads else "") + "best peer | vs best | " +
              " | ".join(f"vs {p}" for p in peers) + " | vs heapscope-off |")
    md.append("|---|" + ("---:|" if threads else "") + "---|---:|" + "---:|" * len(peers) + "---:|")
    for r in hsr:
        md.append(f"| {r['key'][0]} | " + (f"{r['key'][1]} | " if threads else "") + f"{r['best']} | "
                  f"{'> ' if r['lb'] else ''}{fmt(r['vs_best'], 2)} | " +
                  " | ".join(("> " if r["lb"] and math.isfinite(r[p]) else "") + fmt(r[p], 2)
                             for p in peers) + f" | {fmt(r['vs_off'], 3)} |")
    ge = "≥ " if any(r["lb"] for r in hsr) else ""
    md.append(f"| *geo mean*{' (lower bounds)' if ge else ''} | " + ("| " if threads else "") + f"| {ge}" +
              fmt(geomean([r["vs_best"] for r in hsr])) + " | " +
              " | ".join(ge + fmt(geomean([r[p] for r in hsr])) for p in peers) +
              f" | {fmt(geomean([r['vs_off'] for r in hsr]))} |")
    return md


def failed_lines(raw):
    fails = [r for r in raw if r["status"] != "ok"]
    md = ["", "## Failed runs", ""]
    if not fails:
        return md + ["None."]
    md += [f"{len(fails)} of {len(raw)} runs failed (excluded from medians):", ""]
    seen = {}
    for r in fails:
        k = (r["workload"], r["threads"], r["allocator"], r["status"])
        seen[k] = seen.get(k, 0) + 1
    for k, n in seen.items():
        md.append(f"- {k[2]} on {k[0]} T={k[1]}: {k[3]} ×{n}")
    return md


def memory_return(tmp, allocs):
    res = {}
    for a in allocs:
        path = os.path.join(tmp, f"memret-{a}.txt")
        if not os.path.exists(path):
            continue
        samples, events, trim, runner = [], {}, "?", ""
        with open(path) as f:
            for line in f:
                p = line.split()
                if not p:
                    continue
                if p[0] == "#":
                    if p[1] == "event":
                        events[p[2]] = (float(p[3]), int(p[4]) / 1024.0)
                    elif p[1] == "trim":
                        trim = os.path.basename(p[2])
                    elif p[1] == "runner":
                        runner = " ".join(p[2:])
                    continue
                samples.append((float(p[0]), int(p[1]) / 1024.0, p[2]))

        def at(t):
            near = [s for s in samples if s[0] <= t]
            return near[-1][1] if near else float("nan")

        freed = events.get("freed", (float("nan"), 0))[0]
        res[a] = {
            "samples": samples, "trim": trim, "runner": runner,
            "free_start": events.get("peak", (float("nan"), 0))[0],
            "start": events.get("start", (0, float("nan")))[1],
            "peak": max([s[1] for s in samples] + [events.get("peak", (0, 0))[1]]) if samples else float("nan"),
            "1s": at(freed + 1.0), "5s": events.get("idle5", (0, float("nan")))[1],
            "trimmed": events.get("trimmed", (0, float("nan")))[1],
            "end": events.get("end", (0, float("nan")))[1],
        }
    return res


def read_loads(tmp):
    path = os.path.join(tmp, "load.txt")
    return [float(x) for x in open(path) if x.strip()] if os.path.exists(path) else []


def load_lines(meta, loads, own):
    """Markdown bullets: the load average over the run (own: what the suite
    itself puts on the machine) and whether the machine was quiet."""
    md = []
    if meta.get("daemons_before", "0") not in ("", "0"):
        md.append(f"- heapscope daemons running on the machine when the run started: "
                  f"{meta['daemons_before']} (other sessions' tests). The library preloaded is a "
                  "copy named bench-preload-heapscope.so, so that a daemon given --lib does not "
                  "follow the runs; one started without --lib could.")
    if not loads:
        return md
    med = statistics.median(loads)
    md.append(f"- Load average over the run (sampled every 10 s): min {min(loads):.2f}, "
              f"median {med:.2f}, max {max(loads):.2f}. {own}")
    nproc = int(meta.get("nproc", "2") or 2)
    if med > 2 * nproc:
        md.append(f"- **The runs were taken on a shared, very busy machine**: other engineers' "
                  f"builds, tests and benchmarks ran on the same {nproc} cores (median load "
                  f"{med:.1f}). Wall times are inflated 2-5x against an "
                  "idle machine and noisy, page-fault-heavy workloads most of all; some cells "
                  "that take 0.3-3 s when the machine is idle hit the timeout. Compare within a "
                  "row, not across runs; the instruction counts (valgrind) are unaffected.")
    elif med > nproc + 0.5:
        md.append("- **The runs were taken on a shared, busy machine**: other work ran on the "
                  "same cores during the run (median load above the suite's own), so wall "
                  "times carry noise; the instruction counts (valgrind) do not.")
    else:
        md.append("- Quiet machine: the median load is about what the suite itself puts on "
                  f"the {nproc} cores.")
    return md


def rss_rows(cells, order, allocs):
    """Rows where every allocator has a peak RSS: geo means compare like with like."""
    return [k for k in order
            if all(a in cells[k] and math.isfinite(cells[k][a]["m"]) for a in allocs)]


def rss_geomeans(cells, order, allocs):
    rows = rss_rows(cells, order, allocs)
    return {a: geomean([cells[k][a]["m"] for k in rows]) for a in allocs}


def top_functions(path, n):
    """'fn (lib) Ir/pair, ...' from a callgrind output file, main excluded.
    callgrind_annotate splits a function by source file (inlined headers)
    and names the library on some lines only: sum by function name."""
    if not os.path.exists(path) or not shutil.which("callgrind_annotate"):
        return "n/a"
    r = subprocess.run(["callgrind_annotate", path], text=True, capture_output=True)
    irs, libs = {}, {}
    for line in r.stdout.splitlines():
        if line.startswith("-- Auto-annotated source"):
            break
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+)(?:\s+\[(.*)\])?", line)
        if not m or "PROGRAM" in line:
            continue
        fn = m.group(2).rsplit(":", 1)[-1]
        irs[fn] = irs.get(fn, 0) + float(m.group(1).replace(",", ""))
        if m.group(3):
            libs[fn] = os.path.basename(m.group(3))
    parts = [f"`{fn}` ({libs.get(fn, '?')}) {ir / n:.1f}"
             for fn, ir in sorted(irs.items(), key=lambda kv: -kv[1])
             if fn != "main" and ir / n >= 0.5]
    return ", ".join(parts[:5]) if parts else "n/a"


def plot(out, cells, order, allocs, mem, label=None, what="workload"):
    """<out>.png: time and peak-RSS ratios to the best peer per row;
    <out>-memory.png when mem (memory_return()) is given. label(key) names a
    row on the x axis (default workload/Tthreads)."""
    label = label or (lambda k: f"{k[0]}/T{k[1]}")
    gp = shutil.which("gnuplot")
    if not gp:
        return ["(gnuplot not found: no plots)"]
    dat = out + ".plot.dat"
    with open(dat, "w") as f:
        # Comments, not header lines: gnuplot would give a header a (blank) slot.
        f.write("# row " + " ".join(allocs) + "\n")
        for key in order:
            row = cells[key]
            bt, _ = best_peer(row, "t")
            f.write(f"{label(key)} " + " ".join(
                fmt(row[a]["t"] / bt if a in row and math.isfinite(bt) else float("nan"))
                for a in allocs) + "\n")
        f.write("\n\n")
        f.write("# row " + " ".join(allocs) + "\n")
        for key in order:
            row = cells[key]
            bm, _ = best_peer(row, "m")
            f.write(f"{label(key)} " + " ".join(
                fmt(row[a]["m"] / bm if a in row and math.isfinite(bm) else float("nan"))
                for a in allocs) + "\n")
    cols = " , ".join(f"'{dat}' index {{IDX}} using {i + 2}:xtic(1) title '{a}'"
                      for i, a in enumerate(allocs))
    script = f"""
set terminal pngcairo size 1600,1100 font ',10'
set termoption noenhanced
set output '{out}.png'
set datafile missing 'n/a'
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set xtics rotate by -35 scale 0
set logscale y 2
set grid ytics
set key top left horizontal
set ylabel 'time / best peer (median, log2)'
set title 'Time relative to the best peer per {what} (lower is better)'
plot {cols.replace('{IDX}', '0')}
set ylabel 'peak RSS / lowest peer (median, log2)'
set title 'Peak RSS relative to the lowest peer per {what} (lower is better)'
plot {cols.replace('{IDX}', '1')}
unset multiplot
"""
    notes = []
    if mem:
        mdat = out + ".memory.dat"
        with open(mdat, "w") as f:
            for a in allocs:
                if a not in mem:
                    continue
                f.write(f"# {a}\n")
                t0 = mem[a]["free_start"] if math.isfinite(mem[a]["free_start"]) else 0.0
                for s in mem[a]["samples"]:
                    f.write(f"{s[0] - t0:.3f} {s[1]:.1f}\n")
                f.write("\n\n")
        present = [a for a in allocs if a in mem]
        lines = " , ".join(f"'{mdat}' index {i} using 1:2 with lines lw 2 title '{a}'"
                           for i, a in enumerate(present))
        script += f"""
reset
set terminal pngcairo size 1200,700 font ',10'
set output '{out}-memory.png'
set termoption noenhanced
set title 'RSS over time: build a heap of small objects, free it all (from t = 0), idle 5 s, malloc_trim(0), idle 1 s'
set xlabel 'seconds since the free loop started'
set arrow from 0, graph 0 to 0, graph 1 nohead dt 2
set label 'free' at 0.1, graph 0.97
set ylabel 'RSS (MiB)'
set grid
set key right center
plot {lines}
"""
    r = subprocess.run([gp], input=script, text=True, capture_output=True)
    if r.returncode:
        notes.append("gnuplot failed: " + r.stderr.strip()[:300])
    for f in (out + ".plot.dat", out + ".memory.dat"):
        if os.path.exists(f):
            os.unlink(f)
    return notes


def instruction_counts(tmp):
    """instructions.tsv (workload, allocator, instructions, status) ->
    {workload: {allocator: instructions}}, successful counts only."""
    res = {}
    for r in read_tsv(os.path.join(tmp, "instructions.tsv")):
        if r.get("status") == "ok" and r["instructions"] not in ("", "nan"):
            res.setdefault(r["workload"], {})[r["allocator"]] = float(r["instructions"])
    return res


def family_report(tmp, out):
    """The report of one family run from outside (meta.txt: family=NAME):
    time and peak RSS against the best peer per program, geo means and rank,
    issue 19's targets for the family, instruction counts, output checks."""
    meta = read_meta(os.path.join(tmp, "meta.txt"))
    fam = meta.get("family", "")
    spec = FAMILY_TARGETS[fam]
    raw = read_tsv(os.path.join(tmp, "raw.tsv"))
    shutil.copy(os.path.join(tmp, "raw.tsv"), out + ".tsv")
    timeout = float(meta.get("timeout", "nan") or "nan")
    cells, order = collect(raw, timeout, by_threads=False)
    present = {r["allocator"] for r in raw}
    allocs = [a for a in ORDER if a in present]
    quick = meta.get("quick") == "1"
    base = os.path.basename(out)
    progs = {r["name"]: r for r in read_tsv(os.path.join(tmp, "programs.tsv"))}
    ins = instruction_counts(tmp)
    loads = read_loads(tmp)

    def yes(ok):
        return "n/a" if ok is None else ("yes" if ok else "**no**")

    md = [f"# {spec['title']}, {meta.get('date', '')}" +
          (" — QUICK RUN (fewer runs: indicative only)" if quick else ""), ""]
    md.append(f"Produced by `{meta.get('rerun', spec['script'])}` ({meta.get('started', '')} → "
              f"{meta.get('finished', '')}). Runs per cell: {meta.get('runs')}, interleaved (every "
              "allocator once, then again, the order rotated each run). Figures are medians; "
              "ratios are to the best peer (glibc, jemalloc, tcmalloc, mimalloc) of each program.")
    md += ["", "## Machine", ""]
    md.append(f"- CPU: {meta.get('cpu')} ({meta.get('nproc')} cores), kernel {meta.get('kernel')}, "
              f"glibc {meta.get('glibc')}")
    md.append(f"- Peers (Debian 12 packages): jemalloc {meta.get('pkg.libjemalloc2')}, "
              f"tcmalloc (gperftools, minimal) {meta.get('pkg.libtcmalloc-minimal4')}, "
              f"mimalloc {meta.get('pkg.libmimalloc2.0')}; valgrind {meta.get('pkg.valgrind')}")
    others = [f"{k[4:]} {v}" for k, v in meta.items() if k.startswith("pkg.") and k[4:] not in
              ("libjemalloc2", "libtcmalloc-minimal4", "libmimalloc2.0", "valgrind")]
    if others:
        md.append("- Programs (Debian 12 packages): " + ", ".join(others))
    if fam == "mimalloc-bench":
        md.append(f"- mimalloc-bench sources: `{meta.get('suite')}` (license: {meta.get('suite_license', '?').strip()}), "
                  f"compiled with {meta.get('compiler')}, -O3 -DNDEBUG; procs = {meta.get('procs')}; "
                  + ("bench.sh's command lines exactly" if meta.get("bench_sh") == "1" else
                     f"larsonN-sized, larsonN and xmalloc-testN run {meta.get('duration')} s instead of "
                     "bench.sh's 5 s (their figure is a throughput)"))
    md.append(f"- heapscope: commit {meta.get('commit')}; last allocator/ commit: "
              f"{meta.get('allocator_commit')}; state: **{meta.get('heapscope_state')}**")
    md.extend(load_lines(meta, loads, "The suite itself keeps 1 or 2 cores busy. Each run's "
                         "load is in the .tsv (load1)."))

    # ---- summary and targets: over the programs every allocator completed
    common = [k for k in order if all(a in cells[k] and math.isfinite(cells[k][a]["t"]) for a in allocs)]
    tg = ratio_geomeans(cells, common, allocs, "t")
    mg = ratio_geomeans(cells, rss_rows(cells, order, allocs), allocs, "m")
    rss_g = rss_geomeans(cells, order, allocs)
    ins_rows = [w for w in ins if all(a in ins[w] for a in allocs)]

    def ins_ratio(a):
        rs = [ins[w][a] / min(ins[w][p] for p in PEERS if p in ins[w]) for w in ins_rows
              if any(p in ins[w] for p in PEERS)]
        return geomean(rs)

    five = [a for a in PEERS + [HS] if a in allocs]
    ranked = sorted(five, key=lambda a: tg[a] if math.isfinite(tg[a]) else float("inf"))
    md += ["", f"## Summary: geo means over the {len(common)} programs that every allocator completed", ""]
    md.append("| allocator | time / best peer | rank of 5 | worst program (time / best peer) | "
              "peak RSS geo mean (MiB) | peak RSS / lowest peer | instructions / fewest peer |")
    md.append("|---|---:|---:|---|---:|---:|---:|")
    for a in allocs:
        worst = max(((cells[k][a]["t"] / best_peer(cells[k], "t")[0], k[0]) for k in common),
                    default=(float("nan"), "-"))
        md.append(f"| {a} | {fmt(tg[a])} | {ranked.index(a) + 1 if a in ranked else '–'} | "
                  f"{worst[1]} {fmt(worst[0], 2)} | {fmt(rss_g.get(a), 1)} | {fmt(mg[a])} | "
                  f"{fmt(ins_ratio(a)) if ins_rows else 'n/a'} |")

    hsr = heapscope_ratios(cells, common, allocs)
    md += ["", "## Targets (issue 19) — reported, not asserted", "",
           "| target | measured | met? |", "|---|---|---|"]
    if hsr:
        g = geomean([r["vs_best"] for r in hsr])
        md.append(f"| heapscope (default period): time geo mean ≤ {spec['geo']:.2f} × the per-program "
                  f"best peer | {fmt(g)} (rank {ranked.index(HS) + 1} of {len(ranked)}) | "
                  f"{yes(g <= spec['geo'] if math.isfinite(g) else None)} |")
        worst = max(hsr, key=lambda r: r["vs_best"])
        above = [f"{r['key'][0]} {fmt(r['vs_best'], 2)}" for r in hsr if r["vs_best"] > spec["worst"]]
        md.append(f"| no program above {spec['worst']:.2f} × its best peer | worst {worst['key'][0]} "
                  f"{fmt(worst['vs_best'], 2)}" + (f"; above: {', '.join(above)}" if above else "") +
                  f" | {yes(not above if math.isfinite(worst['vs_best']) else None)} |")
        low = min(((rss_g[p], p) for p in PEERS if p in rss_g), default=None)
        if low:
            md.append(f"| peak-RSS geo mean ≤ the lowest peer's | heapscope {fmt(rss_g.get(HS), 1)} MiB, "
                      f"lowest peer {low[1]} {fmt(low[0], 1)} MiB ({fmt(rss_g.get(HS, float('nan')) / low[0])} ×); "
                      f"per program vs the lowest peer {fmt(mg.get(HS))} | {yes(rss_g.get(HS, float('inf')) <= low[0])} |")
        else:
            md.append("| peak-RSS geo mean ≤ the lowest peer's | no peer in this run | n/a |")
        g_off = geomean([r["vs_off"] for r in hsr])
        md.append(f"| default period within 0.5 % of sampling off (geo mean default / off) | "
                  f"{fmt(g_off, 4)} | {yes(g_off <= OFF_TARGET) if math.isfinite(g_off) else 'n/a'} |")
    else:
        md.append("| all | heapscope has no successful run | n/a |")

    # ---- tables
    unit = "seconds"
    if fam == "mimalloc-bench":
        unit = "seconds: wall time, or the relative time bench.sh makes from the throughput"
    md += ["", "## Time (median)"]
    md.extend(table_by_alloc(cells, order, allocs, "t", 3, unit, by_threads=False))
    hsr_all = heapscope_ratios(cells, order, allocs)
    if hsr_all:
        md.append("")
        md.extend(hs_vs_peers_lines(hsr_all, allocs, "program", "time ratios", threads=False))
    md += ["", "## Peak RSS (MiB, median of ru_maxrss; for a program of several processes, the largest)"]
    md.extend(table_by_alloc(cells, order, allocs, "m", 1, "MiB", by_threads=False))
    md.append("")
    md.append(f"Geometric mean of peak RSS over the {len(rss_rows(cells, order, allocs))} programs where "
              "every allocator has a successful run: " +
              ", ".join(f"{a} {fmt(v, 1)} MiB" for a, v in rss_g.items()) + ".")

    if ins:
        md += ["", "## Instructions (valgrind --tool=cachegrind --cache-sim=no, children traced)", ""]
        if fam == "mimalloc-bench":
            md.append("One run per program and allocator of the command line timed above, for the "
                      "programs of fixed work (the others run for a fixed time); valgrind runs "
                      "their threads one at a time. The whole process, start-up included. ")
        else:
            md.append(f"One run per program and allocator at input scale {meta.get('ins_scale', '?')} "
                      "(smaller than the timed runs: valgrind runs ~15 × slower); the whole process "
                      "tree, start-up included. ")
        md[-1] += ("Millions of instructions; in brackets the ratio to the peer with the fewest. "
                   "Unaffected by the machine's load.")
        md.append("")
        md.append("| program | " + " | ".join(allocs) + " |")
        md.append("|---|" + "---:|" * len(allocs))
        for w in [k[0] for k in order if k[0] in ins] + [w for w in ins if w not in {k[0] for k in order}]:
            low = min([ins[w][p] for p in PEERS if p in ins[w]] or [float("nan")])
            md.append(f"| {w} | " + " | ".join(
                (f"{ins[w][a] / 1e6:.1f} ({ins[w][a] / low:.3f})" if math.isfinite(low) else f"{ins[w][a] / 1e6:.1f}")
                if a in ins[w] else "–" for a in allocs) + " |")
        md.append("| *geo mean of ratios* | " + " | ".join(
            fmt(geomean([ins[w][a] / min(ins[w][p] for p in PEERS if p in ins[w]) for w in ins
                         if a in ins[w] and any(p in ins[w] for p in PEERS)])) for a in allocs) + " |")
        bad = [r for r in read_tsv(os.path.join(tmp, "instructions.tsv")) if r.get("status") != "ok"]
        if bad:
            md.append("")
            md.append("Not counted: " + ", ".join(f"{r['workload']} under {r['allocator']} ({r['status']})" for r in bad))

    checks = read_tsv(os.path.join(tmp, "checks.tsv"))
    if checks:
        md += ["", "## Output check", "",
               "Every run's output (stdout, and the files a program writes) is hashed (sha256) and "
               "compared with the first run's; a run whose output differs is failed, left out of "
               "the medians, and makes the script exit non-zero.", "",
               "| program | what is compared | sha256 (first 16) | runs compared | differing runs |",
               "|---|---|---|---:|---|"]
        for c in checks:
            md.append(f"| {c['workload']} | {c['outputs']} | `{c['sha256'][:16]}` | {c['runs']} | "
                      f"{c['differs'] or 'none'} |")
    inputs = read_tsv(os.path.join(tmp, "inputs.tsv"))
    if inputs:
        md += ["", f"Inputs (generated by `bench/programs/realprog_inputs.py`, scale "
               f"{meta.get('scale')}, seed {meta.get('seed')}): " +
               ", ".join(f"{r['file']} {int(r['bytes']) / 1e6:.1f} MB (`{r['sha256'][:12]}`)" for r in inputs) + "."]

    if progs:
        md += ["", "## Programs", "", "| program | figure | command |", "|---|---|---|"]
        for name, r in progs.items():
            md.append(f"| {name} | {r['metric']} | `{r['command']}` |")
    notes = os.path.join(tmp, "notes.txt")
    if os.path.exists(notes) and os.path.getsize(notes):
        md += ["", "## Not run", ""]
        for line in open(notes):
            if "|" in line:
                n, why = line.rstrip("\n").split("|", 1)
                md.append(f"- {n}: {why}")
    md.extend(failed_lines(raw))

    pnotes = plot(out, cells, order, allocs, None, label=lambda k: k[0], what="program")
    md += ["", "## Plot and data", "", f"![time and RSS ratios]({base}.png)", "",
           f"Every run: [{base}.tsv]({base}.tsv) (wall_s: wall seconds; time_s: the figure compared; "
           "maxrss_kib: ru_maxrss; load1: the 1-minute load average when the run started)."]
    for n in pnotes:
        md += ["", n]
    with open(out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--family", action="store_true",
                    help="a family run from outside (meta.txt names it), not bench/run.sh")
    args = ap.parse_args()
    if args.family:
        family_report(args.dir, args.out)
        return
    tmp, out = args.dir, args.out
    meta = read_meta(os.path.join(tmp, "meta.txt"))
    raw = read_tsv(os.path.join(tmp, "raw.tsv"))
    shutil.copy(os.path.join(tmp, "raw.tsv"), out + ".tsv")
    timeout = float(meta.get("timeout", "nan") or "nan")
    cells, order = collect(raw, timeout)
    present = {r["allocator"] for r in raw}
    allocs = [a for a in ORDER if a in present]
    quick = meta.get("quick") == "1"
    base = os.path.basename(out)

    loads = read_loads(tmp)
    threads = [int(t) for t in meta.get("threads", "1").split()]

    md = []
    title = f"# Allocator benchmarks, {meta.get('date', '')}"
    if quick:
        title += " — QUICK RUN (smaller inputs, fewer runs: indicative only)"
    md.append(title)
    md.append("")
    md.append(f"Produced by `bench/run.sh{' --quick' if quick else ''}` "
              f"({meta.get('started', '')} → {meta.get('finished', '')}). "
              f"Runs per cell: {meta.get('runs')}, interleaved (every allocator once, "
              f"then again, order rotated each run); threads: {', '.join(map(str, threads))}; "
              f"input scale {meta.get('scale')}. Figures are medians.")
    md.append("")
    md.append("## Machine")
    md.append("")
    md.append(f"- CPU: {meta.get('cpu')} ({meta.get('nproc')} cores), kernel {meta.get('kernel')}, "
              f"glibc {meta.get('glibc')}")
    md.append(f"- Peers (Debian 12 packages): jemalloc {meta.get('pkg.libjemalloc2')}, "
              f"tcmalloc (gperftools, minimal) {meta.get('pkg.libtcmalloc-minimal4')}, "
              f"mimalloc {meta.get('pkg.libmimalloc2.0')}; sqlite3 {meta.get('pkg.sqlite3')}, "
              f"python3 {meta.get('pkg.python3')}, redis {meta.get('pkg.redis-tools')}, valgrind {meta.get('pkg.valgrind')}")
    md.append(f"- heapscope: commit {meta.get('commit')}; last allocator/ commit: "
              f"{meta.get('allocator_commit')}; state: **{meta.get('heapscope_state')}**")
    md.extend(load_lines(meta, loads, f"The suite itself keeps up to {max(threads)} core(s) "
                         "busy (2 per pair in producer_consumer)."))
    excerpt = os.path.join(tmp, "build-heapscope.excerpt")
    if os.path.exists(excerpt) and os.path.getsize(excerpt):
        md.append("- heapscope build errors (first lines):")
        md.append("```")
        md.append(open(excerpt).read().rstrip())
        md.append("```")

    # ---- targets
    hsr = heapscope_ratios(cells, order, allocs)
    fp = read_tsv(os.path.join(tmp, "fastpath.tsv"))
    ins = read_tsv(os.path.join(tmp, "instructions.tsv"))
    ipp = {}
    for tool in ("callgrind", "perf"):
        for a in allocs:
            v = {int(r["n"]): r["instructions"] for r in ins if r["allocator"] == a and r["tool"] == tool}
            try:
                ns = sorted(v)
                ipp[(a, tool)] = (float(v[ns[1]]) - float(v[ns[0]])) / (ns[1] - ns[0])
            except (ValueError, IndexError, KeyError):
                pass
    mem = memory_return(tmp, allocs)

    md.append("")
    md.append("## Targets (from the issue) — reported, not asserted")
    md.append("")
    md.append("| target | measured | met? |")
    md.append("|---|---|---|")

    def yes(ok):
        return "n/a" if ok is None else ("yes" if ok else "**no**")

    n_lb = sum(1 for r in hsr if r["lb"])
    if n_lb:
        md.append(f"| (note) | {n_lb} heapscope cell(s) timed out and count at the timeout "
                  f"({fmt(timeout, 0)} s): the wall-time figures below are lower bounds | |")
    if hsr:
        g_best = geomean([r["vs_best"] for r in hsr])
        md.append(f"| heapscope (default period) wall-time geo mean ≤ 1.10 × best peer | "
                  f"{fmt(g_best)} | {yes(g_best <= 1.10)} |")
        gs = {p: geomean([r[p] for r in hsr]) for p in PEERS if p in allocs}
        md.append("| … strictly below every peer (geo mean of heapscope / peer < 1) | " +
                  ", ".join(f"{p} {fmt(v)}" for p, v in gs.items()) + f" | "
                  f"{yes(all(v < 1 for v in gs.values()))} |")
        worst = max(hsr, key=lambda r: r["vs_best"] if math.isfinite(r["vs_best"]) else 0)
        md.append(f"| no workload worse than 1.5 × best peer | worst: {worst['key'][0]} "
                  f"T={worst['key'][1]} at {fmt(worst['vs_best'], 2)} | "
                  f"{yes(worst['vs_best'] <= 1.5)} |")
        rss_g = rss_geomeans(cells, order, allocs)
        low_peer = min((rss_g[p], p) for p in PEERS if p in rss_g)
        md.append(f"| peak RSS geo mean ≤ lowest peer's | heapscope {fmt(rss_g.get(HS), 1)} MiB, "
                  f"lowest peer {low_peer[1]} {fmt(low_peer[0], 1)} MiB | "
                  f"{yes(rss_g.get(HS, float('inf')) <= low_peer[0])} |")
        g_off = geomean([r["vs_off"] for r in hsr])
        md.append(f"| default period within 1% of sampling off (geo mean default / off) | "
                  f"{fmt(g_off)} | {yes(g_off <= 1.01) if math.isfinite(g_off) else 'n/a'} |")
    else:
        md.append("| all wall-time and RSS targets | heapscope has no successful run | n/a |")
    hi, mi = ipp.get((HS, "callgrind")), ipp.get(("mimalloc", "callgrind"))
    md.append(f"| fast path in no more instructions than mimalloc's (malloc(32)+free) | "
              f"heapscope {fmt(hi, 1)}, mimalloc {fmt(mi, 1)} | "
              f"{yes(hi <= mi) if hi is not None and mi is not None else 'n/a'} |")
    if meta.get("heapscope_state", "ok") != "ok":
        md.append("")
        md.append(f"**Caution:** heapscope {meta.get('heapscope_state')}; its figures do not "
                  "describe the heapscope allocator.")

    # ---- wall time
    md.append("")
    md.append("## Wall time (seconds, median)")
    md.extend(table_by_alloc(cells, order, allocs, "t", 3, "seconds"))

    if hsr:
        md.append("")
        md.extend(hs_vs_peers_lines(hsr, allocs, "workload", "wall-time ratios"))

    # ---- families: the synthetic workloads and run.sh's three programs apart
    md.append("")
    md.append("## Families (issue 19: a synthetic geo mean never stands in for a real program)")
    md.append("")
    md.append("Geo mean of time / best peer per row, over the rows of each family only "
              "(real programs beyond these three: bench/real_programs.sh; the field's suite: "
              "bench/mimalloc_bench.sh).")
    md.append("")
    md.append("| family | rows | " + " | ".join(allocs) + " |")
    md.append("|---|---:|" + "---:|" * len(allocs))
    for fam, keys in (("synthetic (bench/workloads/)", [k for k in order if k[0] not in RUNSH_PROGRAMS]),
                      ("programs (sqlite3, python3, redis)", [k for k in order if k[0] in RUNSH_PROGRAMS])):
        g = ratio_geomeans(cells, keys, allocs, "t")
        md.append(f"| {fam} | {len(keys)} | " + " | ".join(fmt(g[a]) for a in allocs) + " |")

    # ---- RSS
    md.append("")
    md.append("## Peak RSS (MiB, median of ru_maxrss)")
    md.extend(table_by_alloc(cells, order, allocs, "m", 1, "MiB"))
    md.append("")
    common = rss_rows(cells, order, allocs)
    md.append(f"Geometric mean of peak RSS over the {len(common)} rows where every allocator "
              "has a successful run: " + ", ".join(
                  f"{a} {fmt(v, 1)} MiB" for a, v in rss_geomeans(cells, order, allocs).items()) + ".")

    # ---- fast path
    md.append("")
    md.append("## Fast path: malloc(32) + free")
    md.append("")
    md.append("Instructions per pair = (Ir at 2 000 000 pairs − Ir at 1 000 000 pairs) / 1 000 000, "
              "so start-up cancels (valgrind --tool=callgrind, whole process). "
              "ns per pair: timed loop of " + ("10" if quick else "50") + " M pairs, median over runs.")
    md.append("")
    perf_note = meta.get("perf_instructions", "0")
    has_perf = any(k[1] == "perf" for k in ipp)
    md.append("| allocator | instructions / pair (callgrind) |" + (" instructions / pair (perf) |" if has_perf else "") +
              " ns / pair |")
    md.append("|---|---:|" + ("---:|" if has_perf else "") + "---:|")
    for a in allocs:
        ns = [float(r["ns_per_pair"]) for r in fp if r["allocator"] == a and r["status"] == "ok"
              and r["ns_per_pair"] not in ("nan", "")]
        md.append(f"| {a} | {fmt(ipp.get((a, 'callgrind')), 1)} |" +
                  (f" {fmt(ipp.get((a, 'perf')), 1)} |" if has_perf else "") +
                  f" {fmt(statistics.median(ns) if ns else float('nan'), 2)} |")
    md.append("")
    md.append("Where the instructions go (callgrind_annotate of the 2 M-pair run, per pair, "
              "functions above 0.5):")
    md.append("")
    for a in allocs:
        md.append(f"- {a}: " + top_functions(os.path.join(tmp, f"callgrind-{a}.out"), 2000000))
    if not has_perf:
        md.append("")
        md.append(f"`perf stat -e instructions` is not usable on this machine ({perf_note}): "
                  "the hardware counter is not exposed (virtual machine), so callgrind alone counts.")

    # ---- memory return
    if mem:
        md.append("")
        md.append("## Memory given back")
        md.append("")
        md.append(f"`memory_return`: builds a {'256 MiB' if quick else '1 GiB'} heap of small objects "
                  "(16..256 bytes), frees it all, idles 5 s, calls malloc_trim(0) through dlsym, "
                  "idles 1 s; RSS from /proc/self/statm every 100 ms. RSS in MiB.")
        md.append("")
        md.append("| allocator | start | peak | 1 s after free | 5 s after free | after malloc_trim(0) "
                  "| malloc_trim resolved in |")
        md.append("|---|---:|---:|---:|---:|---:|---|")
        for a in allocs:
            if a not in mem:
                continue
            m = mem[a]
            trim = m["trim"]
            lacks = a != "glibc" and trim.startswith("libc.so")
            md.append(f"| {a} | {fmt(m['start'], 1)} | {fmt(m['peak'], 1)} | {fmt(m['1s'], 1)} | "
                      f"{fmt(m['5s'], 1)} | {fmt(m['trimmed'], 1)} | {trim}"
                      f"{' (lacks its own: libc no-op)' if lacks else ''} |")
        bad = [f"{a}: {mem[a]['runner']}" for a in allocs if a in mem and "ok" not in mem[a]["runner"]]
        if bad:
            md.append("")
            md.append("Failed memory-return runs: " + "; ".join(bad))

    # ---- failures
    md.extend(failed_lines(raw))

    notes = plot(out, cells, order, allocs, mem)
    md.append("")
    md.append("## Plots and data")
    md.append("")
    md.append(f"![time and RSS ratios]({base}.png)")
    md.append("")
    if mem:
        md.append(f"![RSS over time]({base}-memory.png)")
        md.append("")
    md.append(f"Every run: [{base}.tsv]({base}.tsv) (wall seconds, ru_maxrss KiB, status).")
    for n in notes:
        md.append("")
        md.append(n)
    md.append("")
    md.append("## Workloads")
    md.append("")
    md.append("Sources in `bench/workloads/` (one file each; the header comment of each says what it "
              "models). `sqlite3`: Debian's sqlite3 on `:memory:` running `bench/programs/"
              "sqlite_workload.sql`; `python3`: Debian's /usr/bin/python3 with PYTHONMALLOC=malloc "
              "running `bench/programs/python_workload.py`; `redis`: Debian's redis-server (7.0) "
              "under the allocator, driven by redis-benchmark on 127.0.0.1 (pipelined SET, GET, "
              "INCR, LPUSH, LPOP, SADD, HSET, SPOP); wall time is the client's, peak RSS the "
              "server's. Debian links redis against libjemalloc.so.2 dynamically but calls plain "
              "malloc/free, so preloading interposes; its glibc column preloads "
              "`bench/workloads/glibc_shim.c` (else jemalloc would serve it). These three run at "
              "1 thread only.")
    with open(out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
