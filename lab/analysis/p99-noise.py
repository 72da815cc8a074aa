#!/usr/bin/env python3
"""What issue 45's p99 rule would make of a prediction as right as can be:
the noise of the rounds' p99 and of the runs alone it is read from.

    lab/analysis/p99-noise.py [--rows N] [--trials T] RUN_JSON [...]

Each RUN_JSON is a pair's `fikit-run` run.json (rounds with each job's
iterations as the gate saw them) under a folder named for its GPU
(`h200-...`, `h100-...`: the first path part that starts with h100 or
h200); a run read twice (a folder unpacked under two names) counts once.
Per round the latency-critical job's (priority 0) p99 iteration (nearest
rank over the iterations the gate recorded, as fikit-run reads them);
per row (a policy's repetitions of the job, at least 3) one repetition's
spread from pairs of repetitions, (ln x_i - ln x_j) / sqrt 2, both signs,
pooled per GPU and policy. A trial draws N rows (default 6, a set's
latency-critical rows a policy); each row's real p99 is the median of r
draws, its prediction the median of K draws from the runs alone
(exclusive) pool: a model that is right but reads the job from K runs of
its own, as fikit-profile's untraced runs; scored |prediction / real - 1|
against the rule's 10% median and 25% worst. Prints per GPU and policy the
share of trials that pass for K in 3, 5, 7, 9 at r = 9 (and K = 3 at
r = 3). Deterministic (seeded).
"""

import math
import random
import statistics
import sys

import perfect
import summaries

POLICIES = ("exclusive", "timeslice", "mps", "fikit")


def p99(its):
    s = sorted(its)
    return s[max(0, math.ceil(0.99 * len(s)) - 1)] if s else None


def gpu_of(path):
    for part in path.split("/"):
        if part.startswith(("h100", "h200")):
            return part[:4]
    sys.exit(f"p99-noise: {path}: no folder named for its GPU (h100-..., h200-...)")


def pools(paths):
    out = {}
    for path, run in summaries.distinct_runs(paths, "p99-noise"):
        critical = {j[0] for j in run["jobs"] if j[2] == 0}
        by = {}
        for r in run["rounds"]:
            for j in r["jobs"]:
                if j.get("exit_code") == 0 and j.get("iterations_ns") and j["job"] in critical:
                    v = p99(j["iterations_ns"])
                    if v:
                        by.setdefault((r["policy"], j["job"]), []).append(v)
        for (policy, _job), xs in by.items():
            if len(xs) < 3:
                continue
            out.setdefault((gpu_of(path), policy), []).extend(perfect.pair_deviations(xs))
    return out


def main():
    args = sys.argv[1:]
    n_rows, n_trials = 6, 3000
    while args and args[0] in ("--rows", "--trials"):
        if len(args) < 2:
            sys.exit(__doc__)
        try:
            value = int(args[1])
        except ValueError:
            sys.exit(f"p99-noise: {args[0]}: not a whole number: {args[1]}")
        n_rows, n_trials = (value, n_trials) if args[0] == "--rows" else (n_rows, value)
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    p = pools(args)
    print(f"{n_rows} latency-critical rows a trial, {n_trials} trials; rule: median at most 10%, worst at most 25%; "
          "K: runs alone the prediction reads, r: repetitions")
    for gpu in sorted({g for g, _ in p}):
        alone = p.get((gpu, "exclusive"))
        for policy in POLICIES:
            pool = p.get((gpu, policy))
            if not pool or not alone:
                continue
            rng = random.Random(f"{gpu}-{policy}")
            cells = [f"{gpu} {policy:9} one repetition's |log deviation| median {statistics.median(abs(x) for x in pool):.3f}:"]
            for k, r in ((3, 3), (3, 9), (5, 9), (7, 9), (9, 9)):
                share, _m, _w = perfect.trials([(pool, n_rows, alone, k)], r, (0.10, 0.25), n_trials, rng)
                cells.append(f"K{k}/r{r} {share:4.0%}")
            print("  ".join(cells))


if __name__ == "__main__":
    main()
