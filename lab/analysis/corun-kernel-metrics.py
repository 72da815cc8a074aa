#!/usr/bin/env python3
"""How much a small job's kernels stretch beside a busy partner under MPS,
by what each kernel does alone: its DRAM and L2 traffic and its SM issue
rate (a metrics pass of the same program: `fikit-profile --metrics`, per
kernel key, median over its launches).

Kernels matched one to one with the same program alone, as
lab/analysis/corun-pair.py does (its first fifth left out), and only
those a partner kernel overlapped wholly (at least 99% of the kernel), so
that what differs between rows is the kernel, not how long it met the
partner. Time-weighted stretch (beside over alone) per bin of each figure.

    /tmp/hs/bin/python lab/analysis/corun-kernel-metrics.py SMALL_ALONE SMALL_CORUN PARTNER_CORUN SMALL_METRICS

Exit 2 on bad input.
"""
import importlib.util
import sys
from pathlib import Path

import polars as pl

_spec = importlib.util.spec_from_file_location("corun_pair", Path(__file__).with_name("corun-pair.py"))
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)

BINS = {
    "DRAM GB/s": ("dram", [0, 50, 200, 500, 1000, float("inf")]),
    "L2 GB/s": ("l2", [0, 500, 1000, 2000, 3000, float("inf")]),
    "issue rate, basis points": ("issue", [0, 1000, 2000, 4000, float("inf")]),
}


def main(alone_path, small_path, partner_path, metrics_path):
    a = cp.ops(alone_path, ["kernel"])
    k = cp.ops(small_path, ["kernel"])
    p = cp.ops(partner_path, ["kernel"])
    if a.height != k.height:
        raise ValueError(f"{alone_path} has {a.height} kernels and {small_path} {k.height}: not the same program")
    cut = k.height // 5
    starts, ends = k["start_ns"].to_numpy()[cut:], k["end_ns"].to_numpy()[cut:]
    over, _ = cp.overlap(starts, ends, p["start_ns"].to_numpy(), p["end_ns"].to_numpy())
    m = pl.read_parquet(metrics_path)
    if "metric_dram_read_bytes" not in m.columns:
        raise ValueError(f"{metrics_path}: no metric_* columns (profile with --metrics)")
    m = m.filter(pl.col("kind") == "kernel").with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("d"))
    per_key = m.group_by("kernel_key").agg(
        ((pl.col("metric_dram_read_bytes") + pl.col("metric_dram_write_bytes")) / pl.col("d")).median().alias("dram"),
        (pl.col("metric_l2_bytes") / pl.col("d")).median().alias("l2"),
        pl.col("metric_sm_issue_bp").median().alias("issue"),
    )
    df = (
        pl.DataFrame(
            {
                "kernel_key": a["kernel_key"].to_numpy()[cut:],
                "alone": (a["end_ns"] - a["start_ns"]).to_numpy()[cut:],
                "beside": ends - starts,
                "over": over,
            }
        )
        .filter(pl.col("over") >= 0.99)
        .join(per_key, on="kernel_key", how="left")
    )
    total = df["alone"].sum()
    if total == 0:
        raise ValueError(f"{small_path}: no kernel a partner kernel overlapped wholly")
    covered = df.filter(pl.col("dram").is_not_null())["alone"].sum() / total
    print(f"{small_path}: kernels a partner kernel overlapped wholly: {df.height}, {total / 1e6:.1f} ms alone, {df['beside'].sum() / total:.2f}x; with figures: {covered:.0%} of that time")
    for label, (col, edges) in BINS.items():
        cells = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            s = df.filter((pl.col(col) >= lo) & (pl.col(col) < hi))
            if s.height:
                span = f"{lo:g}-{hi:g}" if hi != float("inf") else f"{lo:g}+"
                cells.append(f"{span}: {s['alone'].sum() / total:.0%} of the time, {s['beside'].sum() / s['alone'].sum():.2f}x")
        print(f"  by {label}: " + "; ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    try:
        main(*sys.argv[1:])
    except (OSError, ValueError, KeyError) as e:
        print(f"corun-kernel-metrics.py: {e}", file=sys.stderr)
        sys.exit(2)
