#!/usr/bin/env python3
"""fikit-run results beside the FIKIT paper and beside fikit-sim, from
fikit-run's run.json files.

    python3 lab/analysis/fikit-run-summary.py LABEL=RUN.json [LABEL=RUN.json ...]

Prints Markdown: (1) per pair, FIKIT's speedup over time slicing for the
high- and the low-priority job (real: median [range] over the repetitions
that were co-runs; simulated: the simulated time-slicing slowdown over the
simulated FIKIT one), beside the paper's figures (arXiv 2311.10359:
high-priority JCT 1.32-16.41x better than default sharing, low-priority
0.86-1x); (2) per policy and job, real and simulated slowdown and the error;
(3) the median and worst |error| per policy over the rows with co-runs.
Rows without a co-run repetition are listed but left out of (3).
"""
import json
import statistics
import sys


def spread(s):
    if s is None:
        return "-"
    if s["min"] == s["max"]:
        return f"{s['median']:.2f}x"
    return f"{s['median']:.2f}x [{s['min']:.2f}-{s['max']:.2f}]"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = []
    for a in sys.argv[1:]:
        label, _, path = a.rpartition("=")
        rows = json.load(open(path))["rows"]
        runs.append((label or path, rows))

    print("| pair | high job: real | high: simulated | low job: real | low: simulated | co-runs |")
    print("|---|---|---|---|---|---|")
    for label, rows in runs:
        by = {(r["policy"], r["priority"] == min(x["priority"] for x in rows)): r for r in rows}
        cells = []
        for high in (True, False):
            f, t = by.get(("fikit", high)), by.get(("timeslice", high))
            if not f:
                cells += ["-", "-"]
                continue
            cells.append(spread(f["vs_timeslice"]))
            if f.get("sim_slowdown") and t and t.get("sim_slowdown"):
                cells.append(f"{t['sim_slowdown']['median'] / f['sim_slowdown']['median']:.2f}x")
            else:
                cells.append("-")
        f = by.get(("fikit", True))
        cells.append(f"{f['co_runs']}/{f['ok_runs']}" if f else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| paper (arXiv 2311.10359) | 1.32-16.41x | | 0.86-1x | | |")
    print()

    print("| pair | policy | job | real slowdown | simulated | error | co-runs |")
    print("|---|---|---|---|---|---|---|")
    errors = {}
    for label, rows in runs:
        for r in rows:
            if r["policy"] == "exclusive":
                continue
            e = r.get("error")
            if e is not None and r.get("co_runs"):
                errors.setdefault(r["policy"], []).append(abs(e))
            sim = r.get("sim_slowdown")
            print(
                f"| {label} | {r['policy']} | {r['job']} | {spread(r['slowdown'])} | "
                f"{sim['median']:.2f}x | " if sim else f"| {label} | {r['policy']} | {r['job']} | {spread(r['slowdown'])} | - | ",
                end="",
            )
            print(f"{e * 100:+.1f}% | {r.get('co_runs')}/{r['ok_runs']} |" if e is not None else f"- | {r.get('co_runs')}/{r['ok_runs']} |")
    print()
    print("| policy | rows | median abs error | worst |")
    print("|---|---|---|---|")
    for p, v in sorted(errors.items()):
        print(f"| {p} | {len(v)} | {statistics.median(v) * 100:.1f}% | {max(v) * 100:.1f}% |")
    every = [x for v in errors.values() for x in v]
    if every:
        print(f"| all | {len(every)} | {statistics.median(every) * 100:.1f}% | {max(every) * 100:.1f}% |")


if __name__ == "__main__":
    main()
