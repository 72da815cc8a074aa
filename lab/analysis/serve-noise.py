#!/usr/bin/env python3
"""What issue 47's serving rule would make of a perfect prediction on these
machines: the real side's own noise, from the serving rounds on record.

    lab/analysis/serve-noise.py [--servers S] [--partners P] [--trials T] [--characterization K] RUN_JSON [...]

Each RUN_JSON is a serving pair's `fikit-run` run.json (rounds with each
job's region and, for the server, its requests' p99). A run.json read
twice (a sitting's folder unpacked under two names) counts once, by its
pair and first round's spawn time. For every shared row (a policy's
repetitions of one job, at least 3) the spread of one repetition is
estimated from pairs of repetitions, (ln x_i - ln x_j) / sqrt 2, both
signs, pooled per role: the server's p99, a partner's region (its
slowdown's numerator: the run alone divides every repetition alike in
this pool). A trial draws S server rows and P partner rows (default 6 and
8, `lab/validate/serve-oos3.json`'s rows a policy: 4 pairs and 2 scenarios
of three jobs); each row's real value is the median of k draws (k in 3,
5, 7, 9), and a prediction that is exactly the truth scores |1 / real - 1|.
The rule passes a trial when the median over the rows is at most 10% and
the worst at most 25%. Prints per policy and k the share of trials that
pass, and each role's one-repetition spread (median and 90th percentile of
|deviation|). With --characterization K, the server rows' prediction is
itself the median of K draws from the servers' runs alone (exclusive rows'
pool): a model as right as can be that reads each server from K runs of
its own, as fikit-profile's untraced runs (9 by default for a job of
priority 0 since 2026-11-29, 3 before); the partners'
prediction stays exact. Deterministic (seeded).
"""

import random
import statistics
import sys
from collections import defaultdict

import perfect
import summaries

POLICIES = ("timeslice", "mps", "fikit")
ALONE = "exclusive"


def pools(paths):
    server, partner = defaultdict(list), defaultdict(list)
    rows = defaultdict(lambda: [0, 0])
    for _path, run in summaries.distinct_runs(paths, "serve-noise"):
        by = defaultdict(list)
        for r in run["rounds"]:
            if r["policy"] not in POLICIES + (ALONE,):
                continue
            for j in r["jobs"]:
                if j.get("exit_code") != 0:
                    continue
                if j.get("requests"):
                    by[(r["policy"], j["job"], "server")].append(j["requests"]["p99_ms"])
                else:
                    by[(r["policy"], j["job"], "partner")].append(j["end_ns"] - j["first_launch_ns"])
        for (policy, _job, role), xs in by.items():
            if len(xs) < 3:
                continue
            rows[policy][0 if role == "server" else 1] += 1
            (server if role == "server" else partner)[policy] += perfect.pair_deviations(xs)
    return server, partner, rows


def main():
    args = sys.argv[1:]
    opts = {"--servers": 6, "--partners": 8, "--trials": 4000, "--characterization": 0}
    while args and args[0] in opts:
        if len(args) < 2:
            sys.exit(__doc__)
        try:
            opts[args[0]] = int(args[1])
        except ValueError:
            sys.exit(f"serve-noise: {args[0]}: not a whole number: {args[1]}")
        args = args[2:]
    if not args:
        sys.exit(__doc__)
    server, partner, rows = pools(args)
    rng = random.Random(47)
    c = opts["--characterization"]
    print(f"rows a trial: {opts['--servers']} server p99s, {opts['--partners']} partner slowdowns; "
          f"rule: median at most 10%, worst at most 25%; {opts['--trials']} trials; "
          + (f"the server's prediction the median of {c} runs alone" if c else "the prediction exact"))
    for policy in POLICIES:
        s, p = server[policy], partner[policy]
        if not s or not p:
            print(f"{policy}: no rows")
            continue
        spread = lambda pool: (statistics.median(abs(x) for x in pool), sorted(abs(x) for x in pool)[int(0.9 * len(pool))])
        sm, s9 = spread(s)
        pm, p9 = spread(p)
        print(f"{policy}: {rows[policy][0]} server rows, {rows[policy][1]} partner rows on record; "
              f"one repetition's |log deviation| median / 90th: server p99 {sm:.3f} / {s9:.3f}, partner {pm:.3f} / {p9:.3f}")
        for k in (3, 5, 7, 9):
            servers = (s, opts["--servers"], server[ALONE], c) if c else (s, opts["--servers"])
            share, med, worst = perfect.trials([servers, (p, opts["--partners"])], k, (0.10, 0.25), opts["--trials"], rng)
            print(f"  {k} repetitions: a perfect prediction passes {share:5.1%} (median of the trials' median {med:.1%}, worst {worst:.1%})")


if __name__ == "__main__":
    main()
