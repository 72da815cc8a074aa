#!/usr/bin/env python3
"""Observational, not the designed test (lab/validate/host-corun.json is):
each job's sampled launch-call time per call in a shared round over the
median of its rounds alone in the same run.json, per policy, for the
latency-critical job (the round's first) and its partner, over every
run.json below the given folders (a run seen twice counted once); and, as
the yardstick, each round alone over the median of the job's other rounds
alone (jobs with at least 3).

    lab/analysis/launch-calls-shared.py DIR [DIR ...]

(fikit-run's rounds record `launch_call_ns` over `launch_calls` sampled
launch calls of each job.) Lab log 2026-11-29.
"""

import collections
import glob
import json
import statistics
import sys


def per_call(job):
    return job["launch_call_ns"] / job["launch_calls"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ratios = collections.defaultdict(list)
    seen = set()
    paths = [f for d in sys.argv[1:] for f in glob.glob(d + "/**/run.json", recursive=True)]
    for path in paths:
        try:
            rounds = json.load(open(path)).get("rounds", [])
        except (OSError, ValueError) as e:
            sys.exit(f"{path}: not a fikit-run run.json ({e})")
        # The same run copied into two folders: its rounds' first launches.
        key = tuple((r["policy"], r["repetition"], r["jobs"][0].get("first_launch_ns")) for r in rounds)
        if key in seen:
            continue
        seen.add(key)
        alone = collections.defaultdict(list)
        for r in rounds:
            if r["policy"] == "exclusive":
                for j in r["jobs"]:
                    if j.get("launch_calls"):
                        alone[j["job"]].append(per_call(j))
        for v in alone.values():
            if len(v) >= 3:
                for i, x in enumerate(v):
                    ratios[("exclusive", "vs its others")].append(x / statistics.median(v[:i] + v[i + 1 :]))
        for r in rounds:
            if r["policy"] == "exclusive" or len(r["jobs"]) < 2:
                continue
            for pos, j in enumerate(r["jobs"]):
                if j.get("launch_calls") and j["job"] in alone:
                    who = "first" if pos == 0 else "other"
                    ratios[(r["policy"], who)].append(per_call(j) / statistics.median(alone[j["job"]]))
    for k, v in sorted(ratios.items()):
        v.sort()
        q = lambda p: v[int(p * (len(v) - 1))]  # noqa: E731
        over = sum(x > 1.05 for x in v) / len(v)
        print(
            k,
            len(v),
            "median %.3f  q25 %.3f q75 %.3f" % (statistics.median(v), q(0.25), q(0.75)),
            "frac>1.05 %.2f" % over,
        )


if __name__ == "__main__":
    main()
