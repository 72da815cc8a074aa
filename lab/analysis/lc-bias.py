#!/usr/bin/env python3
"""Which way the prediction misses, and how much of it the host explains.

    lab/analysis/lc-bias.py SUMMARY_JSON [SUMMARY_JSON ...]

Each SUMMARY_JSON is a `fikit-run set` or `fikit-run summary` output. Per
policy and role (latency-critical: priority 0; partner: any other), over
the rows with an error: the median signed error (simulated - real) / real,
the rows underpredicted, the median of the row's "host vs alone" (its
launch calls shared over alone, fikit-run's column), and the median error
once the real slowdown is divided by that host figure (what is left when
the host's slowdown beside the partner is taken out).
"""

import statistics
import sys
from collections import defaultdict

import summaries


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    errors, hosts, divided = defaultdict(list), defaultdict(list), defaultdict(list)
    for path in sys.argv[1:]:
        for r in summaries.rows(path, "lc-bias"):
            if r.get("error") is None or r["policy"] == "exclusive":
                continue
            key = (r["policy"], "latency-critical" if r["priority"] == 0 else "partner")
            errors[key].append(r["error"])
            host = (r.get("host_vs_alone") or {}).get("median")
            real, sim = r["slowdown"]["median"], r["sim_slowdown"]["median"]
            if host:
                hosts[key].append(host)
                divided[key].append(sim / (real / host) - 1)
    print("policy     role              rows  signed median  under  host vs alone  host divided out")
    for key in sorted(errors):
        e = errors[key]
        h = f"{statistics.median(hosts[key]):13.3f}" if hosts[key] else f"{'-':>13s}"
        d = f"{statistics.median(divided[key]):+16.1%}" if divided[key] else f"{'-':>16s}"
        under = sum(x < 0 for x in e)
        print(f"{key[0]:10s} {key[1]:16s} {len(e):5d}  {statistics.median(e):+13.1%}  {under:5d}  {h}  {d}")


if __name__ == "__main__":
    main()
