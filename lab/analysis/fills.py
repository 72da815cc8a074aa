#!/usr/bin/env python3
"""How often FIKIT filled, live against simulated: per pair, each partner's
fills as the live gate counted them (`gate.fills`, median over the
repetitions) beside the simulator's (`sim_fills`, fikit-run's rows since
2026-11-29; older run.json gain them by `fikit-run summary --resimulate`).

    python3 lab/analysis/fills.py RUN_JSON [RUN_JSON ...]

Each run once (a sitting unpacked under two names counts once). Prints
one line per partner under FIKIT, then the median and the range of
simulated over live; for rounds traced (`--trace`), also the server's idle
GPU time filled, live (`fill_share`) against simulated (`sim_fill_share`).
"""

import os
import statistics
import sys

import summaries


def main(paths):
    ratios = []
    print(f"{'pair':24} {'partner':9} {'live':>7} {'sim':>7} {'sim/live':>8}")
    # A sitting unpacked under two names is read once.
    for f, run in summaries.distinct_runs(paths, "fills"):
        pair = os.path.basename(os.path.dirname(f))
        for row in run["rows"]:
            if row["policy"] == "fikit" and row.get("fill_share") is not None:
                sim_share = row.get("sim_fill_share")
                sim_share = f"{sim_share:.3f}" if sim_share is not None else "none"
                print(f"{pair:24} {row['job']:9} idle filled: live {row['fill_share']:.3f}, simulated {sim_share}")
            live = (row.get("gate") or {}).get("fills") or 0
            sim = row.get("sim_fills")
            if row["policy"] != "fikit" or (live == 0 and not sim):
                continue
            if sim is None:
                print(f"{pair:24} {row['job']:9} {live:7.0f}  no sim_fills: resimulate this run.json first")
                continue
            r = sim / live if live else float("inf")
            ratios.append(r)
            print(f"{pair:24} {row['job']:9} {live:7.0f} {sim:7.0f} {r:8.2f}")
    if ratios:
        print(f"simulated over live: median {statistics.median(ratios):.2f}, "
              f"range {min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} partners")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
