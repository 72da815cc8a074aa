#!/usr/bin/env python3
"""How well real pairs repeat: each repetition's slowdown against the
median of the row's other repetitions, the yardstick oos-45b.json's rule
reports beside the prediction's error (not judged).

    lab/analysis/repeatability.py SUMMARY_JSON [SUMMARY_JSON ...]

Each SUMMARY_JSON is a `fikit-run set` or `fikit-run summary` output
(summary.json; rows with `slowdowns`, one a repetition). A row (pair,
policy, job) with at least 3 repetitions gives one figure a repetition,
(s_i - median of the others) / median of the others; rows of several files
are pooled as they come (name each sitting once). Prints, per policy and
sample, the median and worst |figure| over every repetition of every row,
and beside them the prediction's median and worst |error| over the same
rows.
"""

import statistics
import sys
from collections import defaultdict

import summaries


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    repeat = defaultdict(list)
    predicted = defaultdict(list)
    for path in sys.argv[1:]:
        for r in summaries.rows(path, "repeatability"):
            s = r.get("slowdowns") or []
            if r["policy"] == "exclusive" or len(s) < 3:
                continue
            key = (r["policy"], r.get("sample", "-"))
            for i, x in enumerate(s):
                others = statistics.median(s[:i] + s[i + 1 :])
                repeat[key].append(abs(x - others) / others)
            if r.get("error") is not None:
                predicted[key].append(abs(r["error"]))
    print("policy     sample  reps  repeatability median / worst   prediction median / worst (rows)")
    for key in sorted(repeat):
        rep, pred = repeat[key], predicted.get(key, [])
        p = f"{statistics.median(pred):6.1%} / {max(pred):6.1%} ({len(pred)})" if pred else "-"
        print(
            f"{key[0]:10s} {key[1]:6s} {len(rep):5d}  {statistics.median(rep):6.1%} / {max(rep):6.1%}"
            f"              {p}"
        )


if __name__ == "__main__":
    main()
