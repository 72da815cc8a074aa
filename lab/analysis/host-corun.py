#!/usr/bin/env python3
"""Issue 45's host-in-co-runs test, by the design stated before its rounds
(lab log 2026-11-28, "The host in co-runs: the design, stated before it
runs"; set lab/validate/host-corun.json).

    python3 -m venv /tmp/hc && /tmp/hc/bin/pip install polars
    /tmp/hc/bin/python lab/analysis/host-corun.py SET_JSON OUT [OUT ...]

Each OUT is one machine's `fikit-run set SET_JSON -o OUT --trace OUT/traces`
of one GPU: OUT/traces/<pair>/<policy>-<repetition>/<job>-<pid>.parquet,
OUT/profiles/<job>.parquet. A job's exclusive rounds are under the first pair
that ran them.

Per batch-1 job (priority 0) and round, from its trace's kernel launches in
its timed region (after its warm-up, found from the command's --iters: the
last iters + 2 device synchronizations are the one after the warm-up, one a
timed iteration and the final one):
- launch: the median duration of its kernel-launch calls;
- gap: the median host gap from one launch call's return to the next one's
  start on the same thread, gaps that hold a synchronization left out.
Ratio: a shared round against the same repetition's exclusive round of the
job (same OUT). Noise floor: exclusive repetition k against k + 1.
Systematic, per policy and measure, when both hold: the median ratio over
the repetitions exceeds 1.05 in at least 7 of the 9 rows and exceeds the
90th percentile of the floor ratios; and over the 9 rows the ratio ranks
with the partner's launch rate (kernels a second over its profile's
launches, Spearman at least 0.7).
"""

import glob
import json
from bisect import bisect_left
import os
import statistics
import sys

import polars as pl


def timed_launches(path, iters):
    """(launch durations, host gaps) of the trace's timed region, ns."""
    t = pl.read_parquet(path)
    syncs = (t.filter((pl.col("kind") == "sync") & (pl.col("sync_kind") == "context_synchronize"))
             .sort("start_ns"))
    if syncs.height < iters + 2:
        raise SystemExit(f"host-corun: {path}: {syncs.height} device synchronizations, fewer than --iters {iters} + 2")
    start = syncs["end_ns"][syncs.height - iters - 2]
    end = syncs["end_ns"][syncs.height - 1]
    k = (t.filter((pl.col("kind") == "kernel") & pl.col("launch_start_ns").is_not_null()
                  & (pl.col("launch_start_ns") >= start) & (pl.col("launch_end_ns") <= end))
         .sort("launch_start_ns"))
    if k.height < 2:
        raise SystemExit(f"host-corun: {path}: no kernel launches in the timed region")
    durations = (k["launch_end_ns"] - k["launch_start_ns"]).to_list()
    all_syncs = t.filter(pl.col("kind") == "sync").select("start_ns", "end_ns").sort("start_ns")
    s_start = all_syncs["start_ns"].to_list()
    gaps = []
    for thread, g in k.group_by("launch_thread_id"):
        ls, le = g["launch_start_ns"].to_list(), g["launch_end_ns"].to_list()
        for i in range(1, len(ls)):
            a, b = le[i - 1], ls[i]
            # A synchronization starting inside the gap: a wait, not host work.
            j = bisect_left(s_start, a)
            if j < len(s_start) and s_start[j] < b:
                continue
            gaps.append(b - a)
    return durations, gaps


def arg(command, name, default):
    return int(command[command.index(name) + 1]) if name in command else default


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for m in range(i, j + 1):
                r[order[m]] = (i + j) / 2
            i = j + 1
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else float("nan")


def one(pattern):
    files = sorted(glob.glob(pattern))
    if len(files) > 1:
        raise SystemExit(f"host-corun: {len(files)} traces match {pattern}")
    return files[0] if files else None


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    spec = json.load(open(sys.argv[1]))
    outs = sys.argv[2:]
    jobs = spec["jobs"]
    small = {n for n, j in jobs.items() if j["priority"] == 0}
    reps = spec["repetitions"]
    measures = ("launch", "gap")
    cache = {}

    def measure(path, job):
        if path not in cache:
            d, g = timed_launches(path, arg(jobs[job]["command"], "--iters", 0))
            cache[path] = {"launch": statistics.median(d), "gap": statistics.median(g)}
        return cache[path]

    def alone(out, job, r):
        return one(os.path.join(out, "traces", "*", f"exclusive-{r}", f"{job}-*.parquet"))

    # The partner's launch rate: kernels a second over its profile's launches.
    rate = {}
    for n in jobs:
        if n in small:
            continue
        for out in outs:
            p = os.path.join(out, "profiles", f"{n}.parquet")
            if os.path.exists(p):
                k = pl.read_parquet(p).filter(pl.col("kind") == "kernel")
                span = k["launch_end_ns"].max() - k["launch_start_ns"].min()
                rate[n] = k.height / (span / 1e9)
                break

    floor = {m: [] for m in measures}
    for out in outs:
        for n in sorted(small):
            for r in range(1, reps):
                a, b = alone(out, n, r), alone(out, n, r + 1)
                if a and b:
                    for m in measures:
                        floor[m].append(measure(a, n)[m] / measure(b, n)[m])
    print(f"noise floor (exclusive k against k + 1): {len(floor['launch'])} ratios")
    p90 = {}
    for m in measures:
        f = sorted(floor[m])
        p90[m] = f[min(len(f) - 1, int(0.9 * len(f)))] if f else float("nan")
        print(f"  {m:6} median {statistics.median(f) if f else float('nan'):.3f}, 90th percentile {p90[m]:.3f}")
    print()
    for policy in ("timeslice", "mps"):
        rows = []
        for p in spec["pairs"]:
            b1 = next(j for j in p["jobs"] if j in small)
            partner = next(j for j in p["jobs"] if j != b1)
            ratios = {m: [] for m in measures}
            for out in outs:
                for r in range(1, reps + 1):
                    shared = one(os.path.join(out, "traces", p["name"], f"{policy}-{r}", f"{b1}-*.parquet"))
                    base = alone(out, b1, r)
                    if shared and base:
                        for m in measures:
                            ratios[m].append(measure(shared, b1)[m] / measure(base, b1)[m])
            if ratios["launch"]:
                rows.append((p["name"], partner, {m: statistics.median(v) for m, v in ratios.items()}, len(ratios["launch"])))
        print(f"{policy}: shared against alone, median over repetitions")
        print(f"  {'pair':20} {'partner launches/s':>18} {'launch':>7} {'gap':>7}  reps")
        for name, partner, med, n in rows:
            print(f"  {name:20} {rate.get(partner, float('nan')):18.0f} {med['launch']:7.3f} {med['gap']:7.3f}  {n}")
        for m in measures:
            over = sum(1 for _n, _p, med, _k in rows if med[m] > 1.05 and med[m] > p90[m])
            rho = spearman([rate.get(pa, float("nan")) for _n, pa, _m, _k in rows], [med[m] for _n, _p, med, _k in rows]) if len(rows) > 2 else float("nan")
            systematic = len(rows) == 9 and over >= 7 and rho >= 0.7
            print(f"  {m}: {over} of {len(rows)} rows over 1.05 and the floor's 90th percentile; Spearman with the partner's launch rate {rho:.2f}: "
                  f"{'systematic' if systematic else 'not systematic' if len(rows) == 9 else 'incomplete (9 rows needed)'}")
        print()


if __name__ == "__main__":
    main()
