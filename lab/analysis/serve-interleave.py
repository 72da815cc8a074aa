#!/usr/bin/env python3
"""Reads lab/validate/serve-interleave.py's JSON lines (one a process) and
applies its rule: per model, R = median service of the S requests / that of
the B requests in each unpinned process; served is slower when the median R
exceeds 1.10 and R exceeds 1.05 in all but at most one process; the verdict
holds when that is so for at least 2 of the models.

    python3 lab/analysis/serve-interleave.py interleave.jsonl

Also prints, per model, the spread of the B medians between processes
(max / min) and within them (max / min over a process's B blocks), and the
pinned processes' R.
"""

import json
import statistics
import sys


def ratio(p):
    pick = lambda k: [x for b in p["blocks"] if b["kind"] == k for x in b["service_ms_all"]]
    return statistics.median(pick("S")) / statistics.median(pick("B")), statistics.median(pick("B"))


def main(path):
    procs = [json.loads(l) for l in open(path) if l.startswith("{")]
    models = sorted({p["model"] for p in procs})
    slower = 0
    for m in models:
        free = [p for p in procs if p["model"] == m and not p["pinned"]]
        pinned = [p for p in procs if p["model"] == m and p["pinned"]]
        rs = [ratio(p) for p in free]
        r = [x for x, _ in rs]
        b = [x for _, x in rs]
        within = [
            max(x["service_ms"] for x in p["blocks"] if x["kind"] == "B")
            / min(x["service_ms"] for x in p["blocks"] if x["kind"] == "B")
            for p in free
        ]
        holds = len(r) >= 4 and statistics.median(r) > 1.10 and sum(x <= 1.05 for x in r) <= 1
        slower += holds
        print(
            f"{m}: R {' '.join(f'{x:.3f}' for x in r)} median {statistics.median(r):.3f}"
            f" -> served slower: {'yes' if holds else 'no'}; B median ms"
            f" {' '.join(f'{x:.2f}' for x in b)} (between processes {max(b) / min(b):.2f}x,"
            f" within up to {max(within):.2f}x); pinned R"
            f" {' '.join(f'{ratio(p)[0]:.3f}' for p in pinned) or '-'}"
        )
    print(f"verdict: served slower for {slower} of {len(models)} models:"
          f" {'characterize servers open loop' if slower >= 2 else 'a range, not a model'}")


if __name__ == "__main__":
    main(sys.argv[1])
