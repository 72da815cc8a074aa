#!/usr/bin/env python3
"""Per kernel key, how much the model slows a job's kernels beside a busy job
under MPS, set beside how much the GPU did: the simulated run's kernels (a
`fikit-sim export --perfetto --policy mps` of the job's alone trace and the
busy job's), each over its recorded length, while the busy job ran, against
the real co-run's per-key medians (its trace beside the busy job over its
trace alone under MPS, as lab/analysis/mps-kernel-slowdown.py).

    fikit-sim export --perfetto --policy mps ALONE.parquet BUSY.parquet -o sim.json
    /tmp/hs/bin/python lab/analysis/sim-kernel-slowdown.py sim.json ALONE.parquet BESIDE.parquet

e.g. ALONE traces/h200-corun/bert-base-mps-alone-735.parquet, BUSY
lab/traces/h200-2026-11-22/resnet50-bs128-eval-1010.parquet, BESIDE
traces/h200-corun/bert-base-mps-895.parquet. The busy job is the export's
job whose name holds "bs128" (else the other one than ALONE's).
"""
import json
import sys

import polars as pl


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    d = json.load(open(argv[1]))
    events = d["traceEvents"] if isinstance(d, dict) else d
    jobs = [e for e in events if e.get("cat") == "job"]
    if len(jobs) != 2:
        print(f"{argv[1]}: {len(jobs)} jobs; export a pair", file=sys.stderr)
        return 2
    busy = next((j for j in jobs if "bs128" in j["name"]), jobs[1])
    small = next(j for j in jobs if j is not busy)
    end_us = busy["args"]["finish_ns"] / 1e3
    rows = [
        (e["args"]["kernel_key"], e["dur"] * 1e3, e["args"]["recorded_duration_ns"])
        for e in events
        if e.get("cat") == "kernel" and e["pid"] == small["pid"] and e["ts"] + e["dur"] < end_us
    ]
    sim = (
        pl.DataFrame(rows, schema=["key", "sim", "rec"], orient="row")
        .group_by("key")
        .agg((pl.col("sim").median() / pl.col("rec").median()).alias("simulated"))
    )

    def kernels(path):
        return (
            pl.read_parquet(path)
            .filter(pl.col("kind") == "kernel")
            .with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("dur"))
        )

    alone = kernels(argv[2]).group_by("kernel_key").agg(pl.col("dur").median().alias("alone"))
    beside = kernels(argv[3]).group_by("kernel_key").agg(
        pl.col("dur").median().alias("beside"), pl.len().alias("n")
    )
    real = alone.join(beside, on="kernel_key").with_columns(
        (pl.col("beside") / pl.col("alone")).alias("real"),
        pl.col("kernel_key").map_elements(lambda k: f"0x{k:016x}", return_dtype=pl.String).alias("key"),
    )
    m = real.join(sim, on="key").sort("alone", descending=True)
    weight = m["alone"] * m["n"]
    print(f"{small['name']} beside {busy['name']}: {m.height} kernel keys in both")
    with pl.Config(tbl_rows=40):
        print(m.select("key", "alone", "n", "real", "simulated"))
    print(
        "time-weighted: real %.2fx, simulated %.2fx"
        % ((m["real"] * weight).sum() / weight.sum(), (m["simulated"] * weight).sum() / weight.sum())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
