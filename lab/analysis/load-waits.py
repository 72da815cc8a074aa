#!/usr/bin/env python3
"""How long a job's operations wait to start, alone and beside a load, from
the sensitivity pass's two traces of the job (lab/validate/sensitivity.sh:
OUT/alone/JOB-PID.parquet and OUT/beside/JOB-PID.parquet). Issue 15: the
small jobs' waits under MPS.

An operation's wait is its start minus the later of its launch and the
previous operation's end (as in corun-pair.py); the first fifth of the
operations (model load, warm-up) is left out. Per trace: the span, the
kernels' time, the waits (total, percentiles; split into operations ready
at the previous one's end, "queued", and those ready at their launch);
then the waits of WAIT_MS or more (default 10: about a load kernel of
20 ms) by the kernel's shared memory per block; beside the load, the kernel
shapes (threads, registers and shared memory per block) with the most of
them.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars numpy pyarrow
    /tmp/hs/bin/python lab/analysis/load-waits.py [--wait-ms 10] ALONE BESIDE [ALONE BESIDE ...]
"""
import argparse

import numpy as np
import polars as pl


def with_waits(path):
    """The trace's operations with launch times, after the first fifth, with
    the instant each was ready to start (`ready`: the later of its launch and
    the previous operation's end) and its wait (its start minus that)."""
    d = (
        pl.read_parquet(path)
        .filter(pl.col("kind").is_in(["kernel", "memcpy", "memset"]))
        .filter(pl.col("launch_start_ns").is_not_null())
        .sort("start_ns")
    )
    if d.height < 10:
        raise SystemExit(f"{path}: {d.height} operations with launch times, too few")
    d = d.slice(d.height // 5)
    s, e, launch = d["start_ns"].to_numpy(), d["end_ns"].to_numpy(), d["launch_start_ns"].to_numpy()
    prev = np.maximum.accumulate(np.concatenate([[s[0]], e[:-1]]))
    ready = np.maximum(launch, prev)
    smem = (d["static_shared_bytes"].fill_null(0) + d["dynamic_shared_bytes"].fill_null(0)).to_numpy()
    cls = np.where(
        d["kind"].to_numpy() != "kernel",
        "copy, memset",
        np.where(smem == 0, "kernel, no shared memory", np.where(smem < 65536, "kernel, under 64 KiB", "kernel, 64 KiB or more")),
    )
    return d.with_columns(
        pl.Series("ready", ready),
        pl.Series("wait", np.maximum(0, s - ready)),
        pl.Series("queued", prev >= launch),
        pl.Series("class", cls),
        pl.Series("smem", smem),
    )


def by_shape(d, long_ns, rows=8):
    """The kernel shapes with the most waits of `long_ns` or more."""
    k = d.filter(pl.col("kind") == "kernel").with_columns(
        (pl.col("block_x") * pl.col("block_y") * pl.col("block_z")).alias("threads"),
        (pl.col("wait") >= long_ns).alias("long"),
    )
    k = k.with_columns((pl.col("threads") * pl.col("registers_per_thread")).alias("registers per block"))
    return (
        k.group_by(["threads", "registers_per_thread", "registers per block", "smem"])
        .agg(pl.len().alias("kernels"), pl.col("long").sum().alias("long waits"))
        .filter(pl.col("long waits") > 0)
        .sort(["long waits", "kernels"], descending=True)
        .head(rows)
        .rename({"registers_per_thread": "registers per thread", "smem": "shared bytes per block"})
    )


def summary(name, d):
    w, q = d["wait"].to_numpy(), d["queued"].to_numpy()
    span = d["end_ns"].max() - d["start_ns"].min()
    kernels = (d["end_ns"] - d["start_ns"]).sum()
    us = lambda a, p: np.percentile(a, p) / 1e3 if len(a) else float("nan")
    print(
        f"{name}: {d.height} operations over {span / 1e6:.0f} ms, kernels and copies {kernels / 1e6:.0f} ms; "
        f"waits {w.sum() / 1e6:.1f} ms, p50 {us(w, 50):.2f} µs, p90 {us(w, 90):.2f} µs, p99 {us(w, 99):.1f} µs; "
        f"queued {q.mean():.0%} (p50 {us(w[q], 50):.2f} µs), at their launch p50 {us(w[~q], 50):.2f} µs"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wait-ms", type=float, default=10.0)
    ap.add_argument("traces", nargs="+", help="ALONE BESIDE pairs")
    a = ap.parse_args()
    if len(a.traces) % 2:
        ap.error("name the traces in pairs: ALONE BESIDE")
    long_ns = a.wait_ms * 1e6
    for alone, beside in zip(a.traces[::2], a.traces[1::2]):
        print(f"== {alone} against {beside}")
        for name, path in (("alone", alone), ("beside", beside)):
            d = with_waits(path)
            summary(name, d)
            by = (
                d.with_columns((pl.col("wait") >= long_ns).alias("long"))
                .group_by("class")
                .agg(
                    pl.len().alias("operations"),
                    pl.col("long").sum().alias(f"waits >= {a.wait_ms:g} ms"),
                    (pl.col("wait").filter(pl.col("long")).sum() / 1e6).round(0).alias("their ms"),
                    (pl.col("wait").filter(~pl.col("long")).mean() / 1e3).round(2).alias("other waits, mean µs"),
                )
                .sort("class")
            )
            with pl.Config(tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True, tbl_width_chars=160):
                print(by)
                if name == "beside":
                    print(f"kernel shapes with waits of {a.wait_ms:g} ms or more:")
                    print(by_shape(d, long_ns))


if __name__ == "__main__":
    main()
