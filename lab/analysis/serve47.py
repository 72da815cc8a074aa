#!/usr/bin/env python3
"""Issue 47's serving set judged by its rule (lab/validate/serve-47.json's
`about`, lab log 2026-11-28 "Issue 47's serving validation set").

    [SERVE_SET=lab/validate/serve-open.json] lab/analysis/serve47.py SITTING_DIR [SITTING_DIR ...]

Each SITTING_DIR is a `fikit-run set` output folder (OUT/<pair>/run.json).
A pair's rows under a policy come from the sitting that ran that policy
with all its repetitions; its runs alone (exclusive) from the same sitting,
so a row's slowdown and its p99 against alone never mix machines.

Prints, per policy: the server's p99 request latency and each partner's
slowdown, simulated against real (median over repetitions), median and
worst |error| against the rule's 10% / 25%; then live FIKIT where the
server's busy share is at most 0.5: its p99 over its p99 alone (at most
1.10) and each partner's throughput against time slicing (at least 0.86).
"""

import glob
import json
import os
import statistics
import sys

POLICIES = ("timeslice", "mps", "fikit")


def med(x):
    return x.get("median") if isinstance(x, dict) else x


def load(dirs):
    """(pair, policy) -> (sitting, {job: row}), from runs with every
    repetition of that policy done and co-run."""
    out = {}
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "*", "run.json"))):
            run = json.load(open(f))
            pair = os.path.basename(os.path.dirname(f))
            reps = run["repetitions"]
            by = {}
            for r in run["rows"]:
                by.setdefault(r["policy"], {})[r["job"]] = r
            alone = by.get("exclusive", {})
            for pol, rows in by.items():
                if pol == "exclusive":
                    continue
                if not all(r["ok_runs"] >= reps and (r.get("co_runs") or 0) >= reps
                           for r in rows.values()):
                    continue
                if (pair, pol) in out:
                    sys.exit(f"serve47: {pair} {pol} in two sittings: {out[(pair, pol)][0]} and {d}")
                out[(pair, pol)] = (d, rows, alone, run["jobs"])
    return out


def json_lines(folder, pattern):
    """ms_per_iter_median of every workload.py JSON line in the files."""
    out = []
    for f in sorted(glob.glob(os.path.join(folder, pattern))):
        for line in open(f, errors="replace"):
            if '"ms_per_iter_median"' in line:
                out.append(json.loads(line[line.index("{"):])["ms_per_iter_median"])
    return out


def pct(e):
    return f"{100 * e:+.1f}%"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    got = load(sys.argv[1:])
    print("Issue 47's serving set by its rule: simulated (fikit-run's column, each job's own characterization) against real, median of 3 repetitions")
    print()
    print(f"{'pair':26} {'policy':9} {'job':9} {'real':>10} {'sim':>10} {'error':>8}  measure")
    errs = {p: [] for p in POLICIES}
    ranged = {p: [] for p in POLICIES}
    live = []
    for (pair, pol), (d, rows, alone, jobs) in sorted(got.items(), key=lambda k: (k[0][0], POLICIES.index(k[0][1]))):
        server = jobs[0][0]
        for name, _cmd, prio in jobs:
            r = rows[name]
            if name == server:
                real, sim, what = r["p99_ms"], r["sim_p99_ms"], "p99 ms"
                inside = r.get("p99_in_sim_range")
            else:
                real, sim, what = med(r["slowdown"]), med(r["sim_slowdown"]), "slowdown"
                inside = r.get("in_sim_range")
            e = (sim - real) / real
            errs[pol].append((abs(e), pair, name))
            ranged[pol].append(inside)
            mark = {True: "in range", False: "", None: "no range"}[inside]
            print(f"{pair:26} {pol:9} {name:9} {real:10.3f} {sim:10.3f} {pct(e):>8}  {what} {mark}")
        if pol == "fikit":
            s = rows[server]
            ratio = s["p99_ms"] / alone[server]["p99_ms"]
            partners = [(n, med(rows[n]["vs_timeslice"])) for n, _c, _p in jobs if n != server]
            judged = (s.get("busy_share") or 1.0) <= 0.5
            # Each partner's launch calls held: the live gate's (median over
            # the repetitions) beside the simulator's (rows since 2026-11-29).
            held = [(n, rows[n]["gate"]["waits"], rows[n]["gate"]["wait_ms"],
                     rows[n].get("sim_held_waits"), rows[n].get("sim_held_wait_ms"),
                     rows[n]["gate"]["fills"], rows[n].get("sim_fills"))
                    for n, _c, _p in jobs if n != server]
            live.append((pair, s.get("busy_share") or float("nan"), ratio, partners, judged, held))
    print()
    print("accuracy, per policy: median / worst |error| (rule: at most 10% / 25%)")
    for pol in POLICIES:
        e = sorted(errs[pol])
        if not e:
            print(f"  {pol:9} no rows")
            continue
        m = statistics.median(x[0] for x in e)
        ok = m <= 0.10 and e[-1][0] <= 0.25
        print(f"  {pol:9} {len(e):2} rows  {100 * m:5.1f}% / {100 * e[-1][0]:5.1f}% ({e[-1][1]} {e[-1][2]})  {'pass' if ok else 'FAIL'}")
    print()
    print("the real median inside fikit-sim's range (serve-oos3's rule: at least 80% of the rows)")
    for pol in POLICIES:
        r = ranged[pol]
        if r:
            n = sum(x is True for x in r)
            print(f"  {pol:9} {n} of {len(r)} rows ({100 * n / len(r):.0f}%)")
    print()
    print("live FIKIT where the server's busy share is at most 0.5 (rule: p99 at most 1.10x alone, partners at least 0.86x time slicing)")
    for pair, busy, ratio, partners, judged, held in live:
        p = ", ".join(f"{n} {v:.2f}x" for n, v in partners)
        ok = ratio <= 1.10 and all(v >= 0.86 for _n, v in partners)
        verdict = ("pass" if ok else "FAIL") if judged else "not judged (busy over 0.5)"
        print(f"  {pair:26} busy {busy:.2f}  p99 {ratio:.2f}x alone  partners vs time slicing: {p}  {verdict}")
        for n, waits, wait_ms, sim_waits, sim_ms, fills, sim_fills in held:
            sim = f"{sim_waits:.0f} for {sim_ms / 1e3:.2f} s" if sim_waits is not None else "not in this run.json"
            print(f"  {'':26} {n}'s launch calls held: live {waits:.0f} for {wait_ms / 1e3:.2f} s, simulated {sim}")
            sim = f"{sim_fills:.0f}" if sim_fills is not None else "not in this run.json"
            print(f"  {'':26} {n}'s fills: live {fills:.0f}, simulated {sim}")
    print()
    print("the server alone (not judged): p99 request latency real against simulated, and its median service time a request against its profile's untraced runs' median iteration (idle included where the profile served)")
    seen = set()
    for (pair, pol), (d, rows, alone, jobs) in sorted(got.items()):
        server = jobs[0][0]
        if (d, pair) in seen or server not in alone:
            continue
        seen.add((d, pair))
        a = alone[server]
        served = statistics.median(json_lines(os.path.join(d, pair, "logs"), f"exclusive-*-{server}.log"))
        closed = json_lines(os.path.join(d, "profiles"), f"{server}.log")
        closed = statistics.median(closed[1:4]) if len(closed) > 1 else float("nan")  # the untraced runs
        e = (a["sim_p99_ms"] - a["p99_ms"]) / a["p99_ms"]
        print(f"  {pair:26} {'/'.join(d.rstrip('/').split('/')[-2:]):8} p99 {a['p99_ms']:7.2f} sim {a['sim_p99_ms']:7.2f} ms ({pct(e)}); "
              f"service {served:.2f} ms a request against {closed:.2f} ms profiled ({served / closed:.2f}x); busy {a['busy_share']:.2f}")
    missing = [(p["name"], pol) for p in json.load(open(SET))["pairs"] for pol in POLICIES if (p["name"], pol) not in got]
    if missing:
        print()
        print("not run (every repetition co-run): " + ", ".join(f"{a} {b}" for a, b in missing))


# The set whose pairs are listed as not run: SERVE_SET, else serve-47.json.
SET = os.environ.get("SERVE_SET") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "validate", "serve-47.json")

if __name__ == "__main__":
    main()
