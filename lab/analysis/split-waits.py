#!/usr/bin/env python3
"""A small job's waits under MPS by the shared-memory split of the partner's
kernels running when each of its kernels became ready, from both jobs' traces
of one co-run (`fikit-run scenario --trace DIR`: DIR/mps-N/JOB-PID.parquet),
recorded with the driver's split per kernel (`shared_config_bytes`, since 2026-11-27).
Issue 15: does a kernel wait for the SMs of another process's kernel whose
split is smaller than its own?

A kernel's wait is its start minus the later of its launch and the previous
operation's end (load-waits.py's with_waits, as corun-pair.py counts it);
the first fifth of the small job's operations is left out, and so is every
kernel outside the partner's span. At the instant a kernel became ready,
the partner's running kernels (started, not ended) put it in one class, the
first that holds:
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

    /tmp/hs/bin/python lab/analysis/split-waits.py SMALL PARTNER [SMALL PARTNER ...]
"""
import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import polars as pl


def _beside(name):
    """The analysis script NAME.py beside this one, as a module."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), Path(__file__).with_name(f"{name}.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


cp = _beside("corun-pair")  # device(): the trace's per-SM limits
lw = _beside("load-waits")  # with_waits(): operations, when ready, their waits

RESERVED = 1024  # shared memory the SM keeps per block on sm_80 and later


def block_share(d, dev):
    """Each kernel's block as shares of one SM's threads, registers and shared memory."""
    t = (d["block_x"] * d["block_y"] * d["block_z"]).to_numpy().astype(float)
    warps = np.ceil(t / 32)
    r = np.ceil(d["registers_per_thread"].to_numpy() * 32 / 256) * 256 * warps
    sh = (d["static_shared_bytes"].fill_null(0) + d["dynamic_shared_bytes"].fill_null(0)).to_numpy() + RESERVED
    return np.stack([t / dev["max_threads_per_sm"], r / dev["max_registers_per_sm"], sh / dev["max_shared_memory_per_sm"]], axis=1)


def with_split(path):
    """Exits unless the trace records each kernel's split."""
    if "shared_config_bytes" not in pl.read_parquet_schema(path):
        sys.exit(f"{path}: no shared_config_bytes column (recorded since 2026-11-27)")


def kernels(path):
    with_split(path)
    return pl.read_parquet(path)


def small_ops(path):
    """The small job's kernels after the first fifth of its operations, with
    when each was ready, its wait and its shared memory per block (smem)."""
    with_split(path)
    return lw.with_waits(path).filter(pl.col("kind") == "kernel")


def classify(small, partner, dev):
    p = partner.filter(pl.col("kind") == "kernel").sort("start_ns")
    p_share = block_share(p, dev)
    p_everywhere = (p["grid_x"] * p["grid_y"] * p["grid_z"]).to_numpy() >= dev["sm_count"]
    ps, pe = p["start_ns"].to_numpy(), p["end_ns"].to_numpy()
    pc = p["shared_config_bytes"].fill_null(-1).to_numpy()
    # Longest a partner kernel ran: how far back one still running may have started.
    reach = int((pe - ps).max()) if len(ps) else 0
    small = small.filter((pl.col("ready") >= int(ps.min())) & (pl.col("ready") < int(pe.max())))
    r = small["ready"].to_numpy()
    own = small["shared_config_bytes"].fill_null(-1).to_numpy()
    need = small["smem"].to_numpy() + RESERVED
    start = small["start_ns"].to_numpy()
    s_share = block_share(small, dev)
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
        d = classify(small_ops(sp), kernels(pp), cp.device(sp))
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
