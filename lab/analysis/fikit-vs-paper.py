#!/usr/bin/env python3
"""FIKIT's live speedup over time slicing, per job, from validation reports
(`fikit-lab validate` JSON), beside the FIKIT paper's figures (arXiv
2311.10359: high-priority JCT 1.32-16.41x better than default sharing,
low-priority 0.86-1x).

    python3 lab/analysis/fikit-vs-paper.py REPORT.json [REPORT.json ...]

Prints a Markdown table: per scenario, the high- and low-priority job's
timeslice JCT / FIKIT JCT, live and simulated, the high-priority job's
timeslice JCT / its JCT alone (no policy can beat running alone), and the
range over all.
"""
import json, sys


def main():
    rows = []
    for p in sys.argv[1:]:
        for r in json.load(open(p))["rows"]:
            if r["policy"] in ("fikit", "exclusive"):
                rows.append(r)
    by, alone = {}, {}
    for r in rows:
        if r["policy"] == "exclusive":
            alone[(r["scenario"], r["priority"])] = r
        else:
            by.setdefault(r["scenario"], {})["high" if r["priority"] == 0 else "low"] = r
    print("| scenario | high: live | high: sim | high alone (bound) | low: live | low: sim |")
    print("|---|---|---|---|---|---|")
    hl, ll = [], []
    for s, d in by.items():
        h, l = d["high"], d["low"]
        bound = alone[(s, h["priority"])]["live_vs_timeslice"]
        hl.append(h["live_vs_timeslice"]); ll.append(l["live_vs_timeslice"])
        print(f"| {s} | {h['live_vs_timeslice']:.3f}x | {h['sim_vs_timeslice']:.3f}x | {bound:.3f}x | "
              f"{l['live_vs_timeslice']:.3f}x | {l['sim_vs_timeslice']:.3f}x |")
    hl.sort(); ll.sort()
    print(f"\n{len(by)} scenarios: high priority {hl[0]:.2f}-{hl[-1]:.2f}x (median {hl[len(hl)//2]:.2f}x), "
          f"low priority {ll[0]:.2f}-{ll[-1]:.2f}x (median {ll[len(ll)//2]:.2f}x) live; "
          "paper: 1.32-16.41x and 0.86-1x")


if __name__ == "__main__":
    main()
