#!/usr/bin/env python3
"""Pools the gate A/B's on phases of run.json files of `fikit-lab gate-ab`:
per policy, the median of every counted on phase's ratio (its median
iteration over the mean of its two off neighbours') with a bootstrap 95%
interval of that median, and the gate's own work per launch (`gate_ns` over
`gate_calls`, where kept), the launch path its gates used (`launch_path`:
CUPTI's callbacks or the preloaded shim) and the launches they saw per
round (against a run of the same job and iterations by the other path,
whether the shim sees every launch). One process's phases are not
independent of its host speed, so the interval is a guide, not a test.

    lab/analysis/gate-ab-pool.py RUN_JSON...
"""
import json
import random
import statistics
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pools = {}
    for path in argv[1:]:
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot read: {e}", file=sys.stderr)
            return 2
        for rd in run.get("rounds", []):
            for job in rd.get("jobs", []):
                ab = job.get("gate_ab")
                if not ab:
                    continue
                kind = rd["policy"] + (" floor" if ab.get("floor") else "")
                kind += " via " + job.get("launch_path", "cupti")
                p = pools.setdefault((job["job"], kind), {"ratios": [], "runs": 0, "gate_us": [], "launches": []})
                p["launches"].append(job.get("launches", 0))
                p["runs"] += 1
                p["ratios"] += [on / off for _, on, off in ab["phases"]]
                if job.get("gate_calls"):
                    p["gate_us"].append(job["gate_ns"] / job["gate_calls"] / 1e3)
    rng = random.Random(1)
    for (job, kind), p in sorted(pools.items()):
        v = p["ratios"]
        if not v:
            print(f"{job} {kind}: no on phase counted over {p['runs']} runs")
            continue
        boots = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(4000))
        own = ""
        if p["gate_us"]:
            own = f"; the gate's own work {statistics.median(p['gate_us']):.3f} µs a launch (median of {len(p['gate_us'])} runs)"
        print(
            f"{job} {kind}: {statistics.median(v):.3f}x [95% interval {boots[100]:.3f}-{boots[3899]:.3f}] "
            f"over {len(v)} on phases of {p['runs']} runs{own}; launches seen per run {p['launches']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
