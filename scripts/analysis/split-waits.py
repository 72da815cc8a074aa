#!/usr/bin/env python3
"""A small job's waits under MPS by the shared-memory split of the partner's
kernels running when each of its kernels became ready, from both jobs' traces
of one co-run (fikit-run --trace: DIR/mps-N/JOB-PID.parquet), recorded with
the driver's split per kernel (`shared_config_bytes`, since 2026-11-27).
Issue 15: does a kernel wait for the SMs of another process's kernel whose
split is smaller than its own?

A kernel's wait is its start minus the later of its launch and the previous
operation's end (as in corun-pair.py and load-waits.py); the first fifth of
the small job's operations is left out, and so is every kernel outside the
partner's span. At the instant a kernel became ready, the partner's running
kernels (started, not ended) put it in one class, the first that holds:
- "partner idle": none;
- "no SM fits": per-SM packing. One of them has a block on every SM (a grid
  of at least the SMs' count) and its block and the kernel's would not fit
  on one SM together (threads, registers at 256 a warp, shared memory with
  the 1 KiB the SM keeps per block: the trace's per-SM limits);
- "split >= own": every one of them has a split at least the kernel's own;
- "split < own": one of them has a smaller split than the kernel's own, but
  at least the kernel's block needs (its shared memory per block and the
  1 KiB the SM keeps per block);
- "split < block": one of them has a split smaller than the block needs.
Per class: kernels, their waits (total, mean, p50, p90), and for the
packing and split classes how many started only after the last partner
kernel that put them there ended ("after the drain").

    /tmp/hs/bin/python scripts/analysis/split-waits.py SMALL PARTNER [SMALL PARTNER ...]
"""
import argparse
import sys

import numpy as np
import polars as pl

RESERVED = 1024  # shared memory the SM keeps per block on sm_80 and later


def limits(path):
    """The trace's per-SM limits: (SMs, threads, registers, shared bytes)."""
    import pyarrow.parquet as pq

    m = pq.ParquetFile(path).metadata.metadata or {}
    get = lambda k: int(m[f"fikit.{k}".encode()])
    return get("sm_count"), get("max_threads_per_sm"), get("max_registers_per_sm"), get("max_shared_memory_per_sm")


def block_share(d, lim):
    """Each kernel's block as shares of one SM's threads, registers and shared memory."""
    _, threads, regs, smem = lim
    t = (d["block_x"] * d["block_y"] * d["block_z"]).to_numpy().astype(float)
    warps = np.ceil(t / 32)
    r = np.ceil(d["registers_per_thread"].to_numpy() * 32 / 256) * 256 * warps
    sh = (d["static_shared_bytes"].fill_null(0) + d["dynamic_shared_bytes"].fill_null(0)).to_numpy() + RESERVED
    return np.stack([t / threads, r / regs, sh / smem], axis=1)


def kernels(path):
    d = pl.read_parquet(path)
    if "shared_config_bytes" not in d.columns:
        sys.exit(f"{path}: no shared_config_bytes column (recorded since 2026-11-27)")
    return d


def small_ops(path):
    d = (
        kernels(path)
        .filter(pl.col("kind").is_in(["kernel", "memcpy", "memset"]))
        .filter(pl.col("launch_start_ns").is_not_null())
        .sort("start_ns")
    )
    d = d.slice(d.height // 5)
    s, e, launch = d["start_ns"].to_numpy(), d["end_ns"].to_numpy(), d["launch_start_ns"].to_numpy()
    prev = np.maximum.accumulate(np.concatenate([[s[0]], e[:-1]]))
    ready = np.maximum(launch, prev)
    return d.with_columns(
        pl.Series("ready", ready),
        pl.Series("wait", np.maximum(0, s - ready)),
        (pl.col("static_shared_bytes").fill_null(0) + pl.col("dynamic_shared_bytes").fill_null(0)).alias("smem"),
    ).filter(pl.col("kind") == "kernel")


def classify(small, partner, lim):
    p = partner.filter(pl.col("kind") == "kernel").sort("start_ns")
    p_share = block_share(p, lim)
    p_everywhere = (p["grid_x"] * p["grid_y"] * p["grid_z"]).to_numpy() >= lim[0]
    ps, pe = p["start_ns"].to_numpy(), p["end_ns"].to_numpy()
    pc = p["shared_config_bytes"].fill_null(-1).to_numpy()
    # Longest a partner kernel ran: how far back one still running may have started.
    reach = int((pe - ps).max()) if len(ps) else 0
    small = small.filter((pl.col("ready") >= int(ps.min())) & (pl.col("ready") < int(pe.max())))
    r = small["ready"].to_numpy()
    own = small["shared_config_bytes"].fill_null(-1).to_numpy()
    need = small["smem"].to_numpy() + RESERVED
    start = small["start_ns"].to_numpy()
    s_share = block_share(small, lim)
    cls, drained = [], []
    hi = np.searchsorted(ps, r, side="right")
    lo = np.searchsorted(ps, r - reach, side="left")
    for i in range(len(r)):
        idx = np.arange(lo[i], hi[i])
        run = idx[pe[idx] > r[i]]
        if len(run) == 0:
            cls.append("partner idle")
            drained.append(False)
            continue
        cfg = pc[run]
        packed = p_everywhere[run] & ((p_share[run] + s_share[i]) > 1.0).any(axis=1)
        if packed.any():
            c, low = "no SM fits", run[packed]
        elif own[i] >= 0 and (cfg < need[i]).any():
            c, low = "split < block", run[cfg < need[i]]
        elif own[i] >= 0 and (cfg < own[i]).any():
            c, low = "split < own", run[cfg < own[i]]
        else:
            c, low = "split >= own", run[:0]
        cls.append(c)
        drained.append(len(low) > 0 and start[i] >= pe[low].max())
    return small.with_columns(pl.Series("class", cls), pl.Series("after drain", drained))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="SMALL PARTNER pairs")
    a = ap.parse_args()
    if len(a.traces) % 2:
        ap.error("name the traces in pairs: SMALL PARTNER")
    for sp, pp in zip(a.traces[::2], a.traces[1::2]):
        d = classify(small_ops(sp), kernels(pp), limits(sp))
        tot = d["wait"].sum()
        print(f"== {sp} beside {pp}: {d.height} kernels in the partner's span, waits {tot / 1e6:.1f} ms")
        by = (
            d.group_by("class")
            .agg(
                pl.len().alias("kernels"),
                (pl.col("wait").sum() / 1e6).round(1).alias("waits ms"),
                (pl.col("wait").sum() / tot * 100).round(1).alias("% of waits"),
                (pl.col("wait").mean() / 1e3).round(1).alias("mean µs"),
                (pl.col("wait").quantile(0.5) / 1e3).round(1).alias("p50 µs"),
                (pl.col("wait").quantile(0.9) / 1e3).round(1).alias("p90 µs"),
                pl.col("after drain").sum().alias("after the drain"),
            )
            .sort("class")
        )
        with pl.Config(tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True, tbl_width_chars=160):
            print(by)


if __name__ == "__main__":
    main()
