#!/usr/bin/env python3
"""What issue 45's rule would make of a perfect prediction on these
machines: the real side's own noise, from the repetitions on record.

    lab/analysis/rule-noise.py [--rows N] [--trials T] SUMMARY_JSON [...]

Each SUMMARY_JSON is a `fikit-run set` or `fikit-run summary` output
(rows with `slowdowns`, one a repetition). Every shared row (policy not
exclusive) with at least 3 repetitions gives its repetitions' log
deviations, pooled per policy, two ways:
- centred: ln s_i - ln(median of the row's repetitions), which understates
  a repetition's spread about the truth (the median is drawn toward them;
  with 3 repetitions one deviation is always 0);
- left out: ln s_i - ln(median of the row's other repetitions), which
  overstates it (the others' median is noisy too);
- pairs: (ln s_i - ln s_j) / sqrt 2 over the row's pairs, both signs: the
  difference of two repetitions has twice a repetition's variance, so this
  keeps the spread (not the shape: it is made symmetric).
A trial draws N rows (default 12, the rule's rows a policy); each row's
real slowdown is the median of k draws from the pool (its exp), and a
prediction that is exactly the truth scores |1 / real - 1|, the rule's
|simulated - real| / real. The rule passes a trial when the median over
the rows is at most 5% and the worst at most 15%. Prints, per policy, way
and k in 3, 5, 7, 9, the share of trials that pass and the medians of the
trials' median and worst errors. Deterministic (seeded).
"""

import math
import random
import statistics
import sys
from collections import defaultdict

import perfect
import summaries


def pools(paths):
    """Per policy: centred, left-out and pair log deviations, and rows read."""
    centred, left_out, pairs = defaultdict(list), defaultdict(list), defaultdict(list)
    rows = defaultdict(int)
    for path in paths:
        for r in summaries.rows(path, "rule-noise"):
            s = [x for x in (r.get("slowdowns") or []) if x and x > 0]
            if r.get("policy") == "exclusive" or len(s) < 3:
                continue
            rows[r["policy"]] += 1
            med = statistics.median(s)
            for i, x in enumerate(s):
                centred[r["policy"]].append(math.log(x / med))
                others = statistics.median(s[:i] + s[i + 1:])
                left_out[r["policy"]].append(math.log(x / others))
            pairs[r["policy"]] += perfect.pair_deviations(s)
    return centred, left_out, pairs, rows


def main():
    args = sys.argv[1:]
    n_rows, n_trials = 12, 2000
    while args and args[0].startswith("--"):
        if len(args) < 2:
            sys.exit(__doc__)
        flag, value = args[0], args[1]
        if flag == "--rows":
            n_rows = int(value)
        elif flag == "--trials":
            n_trials = int(value)
        else:
            sys.exit(f"rule-noise: unknown option {flag}")
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    centred, left_out, pairs, rows = pools(args)
    print(f"{len(args)} summaries; {n_rows} rows a trial, {n_trials} trials; a perfect prediction")
    print("policy     rows  way       k  passes  median error  worst error")
    for policy in sorted(rows):
        ways = (("centred", centred), ("left out", left_out), ("pairs", pairs))
        for way, pool in ((w, p[policy]) for w, p in ways):
            for k in (3, 5, 7, 9):
                rng = random.Random(f"{policy}-{way}-{k}")
                share, med, worst = perfect.trials([(pool, n_rows)], k, (0.05, 0.15), n_trials, rng)
                print(f"{policy:10s} {rows[policy]:4d}  {way:8s} {k:2d}  {share:6.1%}  {med:12.1%}  {worst:11.1%}")


if __name__ == "__main__":
    main()
