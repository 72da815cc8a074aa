#!/usr/bin/env python3
"""Where a slow batch-1 process's extra time goes: per timed iteration of
fikit traces of one job run alone (scripts/workloads/workload.py), the wall
time, kernel time, GPU idle time, host time in CUDA calls (launches, memsets,
synchronizations) and host time outside them (Python), and per kernel name
the time per iteration, process against process.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars
    /tmp/hs/bin/python lab/analysis/host-speed.py [--split TRACE:ITER] TRACE.parquet ...

An iteration is the span between two consecutive `cudaDeviceSynchronize`
ends: workload.py ends each warm-up and timed step with one and adds one
between them (`warmup + iters + 2` in all). With `--split TRACE:ITER` the
iterations of one trace before and after timed iteration ITER are also
compared (a speed that changes inside a process). Without traces it reads
the H200 traces of bert-base and vit_b_16 batch 1 alone that the repository
ships (lab/traces/h200-2026-11-22/, traces/h200-corun/*alone*).
"""
import argparse
import json
from pathlib import Path

import polars as pl

LAUNCH = ["cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"]
SYNC = ["cudaDeviceSynchronize", "cudaStreamSynchronize", "cuCtxSynchronize", "cuStreamSynchronize"]
GPU = ["kernel", "memcpy", "memset"]
ROOT = Path(__file__).resolve().parents[2]
DEFAULT = [
    "lab/traces/h200-2026-11-22/bert-base-bs1-eval-854.parquet",
    "traces/h200-corun/bert-base-alone-445.parquet",
    "traces/h200-corun/bert-base-mps-alone-735.parquet",
    "lab/traces/h200-2026-11-22/vit_b_16-bs1-eval-794.parquet",
    "traces/h200-corun/vit_b_16-alone-514.parquet",
    "traces/h200-corun/vit_b_16-mps-alone-808.parquet",
]


def union_len(spans):
    """Length of the union of [s, e) spans sorted by s."""
    total, cs, ce = 0, None, None
    for s, e in spans:
        if ce is None or s > ce:
            if ce is not None:
                total += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return total + (ce - cs if ce is not None else 0)


def load(path):
    """The trace's events and its timed iterations' (start, end) ns."""
    ev = pl.read_parquet(path).with_columns(dur=pl.col("end_ns") - pl.col("start_ns"))
    cmd = json.loads(pl.read_parquet_metadata(path)["fikit.command_line"])
    warm, iters = int(cmd[cmd.index("--warmup") + 1]), int(cmd[cmd.index("--iters") + 1])
    ds = ev.filter((pl.col("kind") == "api") & (pl.col("name") == "cudaDeviceSynchronize")).sort("start_ns")
    if ds.height != warm + iters + 2:
        raise SystemExit(f"{path}: {ds.height} cudaDeviceSynchronize calls, expected {warm + iters + 2}")
    ends = ds["end_ns"].to_list()
    return ev, [(ends[warm + j], ends[warm + 1 + j]) for j in range(iters)]


def per_iteration(ev, bounds):
    api = ev.filter(pl.col("kind") == "api")
    if api["thread_id"].n_unique() != 1:
        raise SystemExit("more than one host thread calls CUDA: host time outside calls is not defined")
    gpu = ev.filter(pl.col("kind").is_in(GPU))
    rows = []
    for j, (t0, t1) in enumerate(bounds):
        a = api.filter((pl.col("start_ns") >= t0) & (pl.col("start_ns") < t1))
        g = gpu.filter((pl.col("start_ns") >= t0) & (pl.col("start_ns") < t1)).sort("start_ns")
        k = g.filter(pl.col("kind") == "kernel")
        la = a.filter(pl.col("name").is_in(LAUNCH))
        busy = union_len(zip(g["start_ns"].to_list(), [min(e, t1) for e in g["end_ns"].to_list()]))
        gaps = (a["start_ns"].shift(-1) - a["end_ns"]).drop_nulls()
        wall, in_api = t1 - t0, a["dur"].sum()
        rows.append(dict(
            iter=j,
            wall_ms=wall / 1e6,
            kernels=k.height,
            kernel_ms=k["dur"].sum() / 1e6,
            gpu_idle_ms=(wall - busy) / 1e6,
            launch_ms=la["dur"].sum() / 1e6,
            launch_mean_us=(la["dur"].mean() or 0) / 1e3,
            memset_ms=a.filter(pl.col("name") == "cudaMemsetAsync")["dur"].sum() / 1e6,
            sync_ms=a.filter(pl.col("name").is_in(SYNC))["dur"].sum() / 1e6,
            cuda_calls_ms=in_api / 1e6,
            outside_cuda_ms=(wall - in_api) / 1e6,
            gap_median_us=(gaps.median() or 0) / 1e3,
            gaps_over_50us_ms=gaps.filter(gaps > 50_000).sum() / 1e6,
        ))
    return pl.DataFrame(rows)


def kernel_time(ev, bounds, iters):
    """Per kernel name: time per iteration over the iterations `iters`."""
    k = ev.filter(pl.col("kind") == "kernel")
    parts = [k.filter((pl.col("start_ns") >= bounds[i][0]) & (pl.col("start_ns") < bounds[i][1])) for i in iters]
    return pl.concat(parts).group_by("demangled_name").agg((pl.col("dur").sum() / len(iters) / 1e3).alias("us_per_iter"))


def compare(label, a, b):
    """Medians side by side, b over a."""
    print(f"\n{label}")
    for c in a.columns:
        if c == "iter":
            continue
        x, y = a[c].median(), b[c].median()
        print(f"  {c:20s} {x:9.3f} {y:9.3f}  ratio {y / x if x else float('nan'):.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="*", help="fikit traces of workload.py runs")
    p.add_argument("--split", action="append", default=[], metavar="TRACE:ITER",
                   help="compare one trace's iterations before and after timed iteration ITER")
    a = p.parse_args()
    paths = a.traces or [str(ROOT / t) for t in DEFAULT]
    pl.Config.set_tbl_rows(40)
    pl.Config.set_tbl_width_chars(200)
    tables = {}
    for path in paths:
        ev, bounds = load(path)
        tables[path] = (ev, bounds, per_iteration(ev, bounds))
    cols = [c for c in next(iter(tables.values()))[2].columns if c != "iter"]
    print("median per timed iteration:")
    print(pl.DataFrame({"metric": cols} | {Path(t).stem: [round(d[c].median(), 3) for c in cols] for t, (_, _, d) in tables.items()}))
    for t, (ev, bounds, d) in tables.items():
        q = d["wall_ms"].quantile
        print(f"  {Path(t).stem}: wall p10 {q(0.1):.3f} p50 {q(0.5):.3f} p90 {q(0.9):.3f} ms over {d.height} iterations")
    for spec in a.split:
        path, at = spec.rsplit(":", 1)
        ev, bounds = load(path)
        d = per_iteration(ev, bounds)
        before, after = d.filter(pl.col("iter") < int(at)), d.filter(pl.col("iter") >= int(at))
        compare(f"{Path(path).stem}: iterations before {at} (n={before.height}) and from it (n={after.height}), medians",
                before, after)
        kb = kernel_time(ev, bounds, before["iter"].to_list())
        ka = kernel_time(ev, bounds, after["iter"].to_list())
        j = kb.join(ka, on="demangled_name", suffix="_after").with_columns(
            diff=pl.col("us_per_iter_after") - pl.col("us_per_iter")).sort(pl.col("diff").abs(), descending=True)
        print(f"  kernel time per iteration, before {kb['us_per_iter'].sum():.1f} µs, after {ka['us_per_iter'].sum():.1f} µs; largest change per kernel name {j['diff'][0]:+.2f} µs")


if __name__ == "__main__":
    main()
