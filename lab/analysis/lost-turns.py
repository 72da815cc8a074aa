#!/usr/bin/env python3
"""Where a batch-1 job loses the device under time slicing beside a busy job:
a live timeline (FIKIT_LIVE_TIMELINE) against the simulated run exported for
Perfetto (`fikit-sim export --perfetto --policy timeslice --scenario F`).

    python3 lab/analysis/lost-turns.py --job JOB --requests N \\
        --timeline DIR --perfetto SIM.json [--json OUT]

A lost turn: between two consecutive kernels of JOB, a kernel of the other
job started. Prints, live and simulated, the lost turns and where in a
request they fall (position of the kernel after the loss, kernels counted
from the first, modulo kernels per request = kernels / N, in bins of 10).
For the live run also, for every pair of consecutive kernels of JOB where
the next one was handed to the driver (`submitted_ns`) after the previous
one ended (the job's context had nothing queued), how long it had nothing
queued, and whether the device stayed with it (kept) or went to the other
job (lost).
"""
import argparse, bisect, collections, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timelines import live_kernels, perfetto_kernels  # noqa: E402

IDLE_BINS_US = [0, 2, 5, 10, 20, 30, 40, 50, 75, 100, 150, 200]


def other_between(other_starts, end, start):
    """True when another job's kernel started after `end` and before `start`."""
    j = bisect.bisect_right(other_starts, end)
    return j < len(other_starts) and other_starts[j] < start


def lost_positions(k, other_starts, per_request):
    pos = collections.Counter()
    for i, (a, b) in enumerate(zip(k, k[1:])):
        if other_between(other_starts, a[1], b[0]):
            pos[(i + 1) % per_request // 10 * 10] += 1
    return pos


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--job", required=True)
    ap.add_argument("--requests", type=int, required=True, help="requests the job served (its scenario's count)")
    ap.add_argument("--timeline", required=True)
    ap.add_argument("--perfetto", required=True)
    ap.add_argument("--json")
    a = ap.parse_args()
    jobs = live_kernels(a.timeline)
    live = jobs[a.job]
    other = sorted(r["start_ns"] for j, ks in jobs.items() if j != a.job for r in ks)
    sk, so, _ = perfetto_kernels(a.perfetto, a.job)
    lk = [(r["start_ns"], r["end_ns"]) for r in live]
    per_request = len(lk) // a.requests
    lp, sp = lost_positions(lk, other, per_request), lost_positions(sk, so, per_request)
    idle = {b: {"kept": 0, "lost": 0} for b in IDLE_BINS_US}
    for x, y in zip(live, live[1:]):
        gap = y["submitted_ns"] - x["end_ns"]
        if gap <= 0:
            continue
        lost = other_between(other, x["end_ns"], y["start_ns"])
        b = max(b for b in IDLE_BINS_US if gap >= b * 1000)
        idle[b]["lost" if lost else "kept"] += 1
    out = {"job": a.job, "kernels": len(lk), "kernels_per_request": per_request,
           "lost_turns": {"live": sum(lp.values()), "simulated": sum(sp.values())},
           "lost_turns_by_position_in_request": {str(p): {"live": lp[p], "simulated": sp[p]}
                                                 for p in sorted(set(lp) | set(sp))},
           "live_nothing_queued_us": {f"{b}+": v for b, v in idle.items()}}
    print(json.dumps(out, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
