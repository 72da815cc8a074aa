#!/usr/bin/env python3
"""How hard each job's kernels would press on other jobs' kernels under MPS
if weighed by what they do (the simulator's `corun_weight`), from traces with a
metrics pass's figures (`fikit-profile --metrics`): per trace, time-weighted
over its measured kernels after the first fifth (set-up), the one-wave SM
share, DRAM and L2 traffic (GB/s over each kernel's duration) and SM issue
rate; then the weight by DRAM traffic against the calibration load's at the
kernel's share (MODEL's `corun_load_traffic`, or a calibrate output's
latency-bound probe), the same by L2 traffic, and the issue rate itself,
each averaged over the kernels weighted by share and time (what a kernel
presses on).

    lab/analysis/corun-weights.py LOAD.json TRACE.parquet...

LOAD.json: a GPU model file with `corun_load_traffic`, or the JSON that
`fikit-lab calibrate` prints (its `corun` list). Needs polars and numpy.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import polars as pl

_spec = importlib.util.spec_from_file_location("corun_pair", os.path.join(os.path.dirname(__file__), "corun-pair.py"))
corun_pair = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corun_pair)


def load_traffic(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except ValueError as e:
        raise ValueError(f"{path}: not JSON: {e}") from e
    if d.get("corun_load_traffic"):
        return [tuple(p) for p in d["corun_load_traffic"]]
    for f in d.get("corun", []):
        if f.get("kind") == "latency":
            return [(p["load_demand"], p["load_bytes_per_s"]) for p in f["points"] if p["load_demand"] > 0 and p.get("load_bytes_per_s", 0) > 0]
    raise ValueError(f"{path}: neither corun_load_traffic nor a calibrate output with the load's traffic")


def reference(points, share):
    """The load's traffic at `share`: linear between points, from 0, flat past the last."""
    prev = (0.0, 0.0)
    for s, v in points:
        if share <= s:
            return prev[1] + (v - prev[1]) * (share - prev[0]) / (s - prev[0])
        prev = (s, v)
    return points[-1][1]


def main(argv):
    if len(argv) < 3 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        points = load_traffic(argv[1])
    except (OSError, ValueError, KeyError) as e:
        print(f"{e}", file=sys.stderr)
        return 2
    print(f"{'trace':<28} {'share':>5} {'DRAM':>6} {'L2':>6} {'issue':>5} | weights: {'DRAM':>5} {'L2':>5} {'issue':>5}")
    for path in argv[2:]:
        try:
            dev = corun_pair.device(path)
            d = pl.read_parquet(path).filter(pl.col("kind") == "kernel")
        except Exception as e:  # noqa: BLE001 - any read failure is bad input
            print(f"{path}: cannot read: {e}", file=sys.stderr)
            return 2
        if "metric_dram_read_bytes" not in d.columns:
            print(f"{path}: no metrics columns (profile with --metrics)", file=sys.stderr)
            return 2
        d = d.tail(d.height - d.height // 5).filter(pl.col("metric_dram_read_bytes").is_not_null())
        if d.height == 0:
            print(f"{path}: no measured kernels", file=sys.stderr)
            return 2
        p = corun_pair.per_sm(d, dev)
        blocks = (d["grid_x"] * d["grid_y"] * d["grid_z"]).to_numpy().astype(np.int64)
        share = np.minimum(blocks, p * dev["sm_count"]) / (p * dev["sm_count"])
        dur = np.maximum((d["end_ns"] - d["start_ns"]).to_numpy().astype(float), 1.0)
        dram = (d["metric_dram_read_bytes"] + d["metric_dram_write_bytes"]).to_numpy().astype(float) / dur
        l2 = d["metric_l2_bytes"].to_numpy().astype(float) / dur if "metric_l2_bytes" in d.columns else np.full(d.height, np.nan)
        issue = d["metric_sm_issue_bp"].to_numpy().astype(float) / 1e4
        ref = np.array([reference(points, s) for s in share]) / 1e9
        w = share * dur / (share * dur).sum()
        t = dur / dur.sum()
        name = os.path.basename(path)
        print(f"{name:<28} {(share * t).sum():5.2f} {(dram * t).sum():6.0f} {np.nansum(l2 * t):6.0f} {np.nansum(issue * t):5.2f} | "
              f"{'':9}{(np.minimum(1, dram / ref) * w).sum():5.2f} {np.nansum(np.minimum(1, l2 / ref) * w):5.2f} {np.nansum(issue * w):5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
