#!/usr/bin/env python3
"""How often a job waited about one time-slice quantum between its kernels:
live timelines (FIKIT_LIVE_TIMELINE) against a simulated run exported for
Perfetto (`fikit-sim export --perfetto --scenario F --policy timeslice`).

    python3 lab/analysis/quantum-waits.py --job resnet50-bs1-eval \\
        --timeline DIR --perfetto SIM.json [--json OUT]

Prints, for the job's gaps between consecutive kernels (start of one minus
end of the previous), the number over 1 ms and their sum, and a histogram of
the gaps over 100 us in 250 us bins (the last bin: 3 ms and more); for the
live run also how many of the other job's kernels were switched out.
"""
import argparse, collections, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timelines import live_kernels, perfetto_kernels  # noqa: E402  (the readers beside this script)


def gaps(k):
    k.sort()
    return [s2 - e1 for (_, e1), (s2, _) in zip(k, k[1:])]


def summary(g):
    big = [x for x in g if x > 1_000_000]
    h = collections.Counter(min(x // 250_000, 12) for x in g if x > 100_000)
    return {"gaps_over_1ms": len(big), "gaps_over_1ms_ms": round(sum(big) / 1e6, 1),
            "histogram_250us_bins": {f"{b * 0.25:.2f}ms": h[b] for b in sorted(h)}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--job", required=True)
    ap.add_argument("--timeline", required=True, help="a live run's timeline folder")
    ap.add_argument("--perfetto", required=True, help="the simulated run, exported")
    ap.add_argument("--json")
    a = ap.parse_args()
    jobs = live_kernels(a.timeline)
    live = [(r["start_ns"], r["end_ns"]) for r in jobs.get(a.job, [])]
    switched = sum(1 for j, ks in jobs.items() if j != a.job for r in ks if (r["switched_ns"] or 0) > 0)
    sim, _, ev = perfetto_kernels(a.perfetto, a.job)
    preempted = sum(1 for e in ev if e.get("ph") == "s" and e.get("cat") == "preemption")
    out = {"job": a.job,
           "live": {**summary(gaps(live)), "other_job_kernels_switched_out": switched},
           "simulated": {**summary(gaps(sim)), "preemptions": preempted}}
    print(json.dumps(out, indent=1))
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
