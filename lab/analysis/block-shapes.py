#!/usr/bin/env python3
"""Where a job's kernel time is in kernels whose blocks use shared memory,
and in kernels whose one block needs more than half (or 90%) of an SM's
registers, shared memory or threads: the two waits beside another process
the MPS model does not have (issue 15; the validation log, 2026-11-27,
"Waits beside calibrate's load"). Reads each trace (a profile alone); the
first fifth of its kernels (model load, warm-up) is left out.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars numpy pyarrow
    /tmp/hs/bin/python lab/analysis/block-shapes.py TRACE.parquet [...]
"""
import sys

import numpy as np
import polars as pl
import pyarrow.parquet as pq


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: block-shapes.py TRACE.parquet [...]")
    for p in sys.argv[1:]:
        m = {k.decode(): v.decode() for k, v in (pq.read_metadata(p).metadata or {}).items()}
        try:
            regs_sm, smem_sm, thr_sm = (int(m[f"fikit.{k}"]) for k in ("max_registers_per_sm", "max_shared_memory_per_sm", "max_threads_per_sm"))
        except KeyError as e:
            raise SystemExit(f"{p}: no {e.args[0]} in the trace's metadata")
        d = pl.read_parquet(p).filter(pl.col("kind") == "kernel").sort("start_ns")
        d = d.slice(d.height // 5)
        if d.height == 0:
            raise SystemExit(f"{p}: no kernels")
        thr = (d["block_x"] * d["block_y"] * d["block_z"]).to_numpy().astype(float)
        regs = thr * d["registers_per_thread"].to_numpy()
        smem = (d["static_shared_bytes"].fill_null(0) + d["dynamic_shared_bytes"].fill_null(0)).to_numpy().astype(float)
        of_sm = np.maximum.reduce([regs / regs_sm, smem / smem_sm, thr / thr_sm])
        dur = (d["end_ns"] - d["start_ns"]).to_numpy().astype(float)
        pct = lambda mask: 100 * dur[mask].sum() / dur.sum()
        print(
            f"{p}: {d.height} kernels, {dur.sum() / 1e6:.0f} ms; of the kernel time: "
            f"shared memory {pct(smem > 0):.0f}%, a block over half an SM {pct(of_sm > 0.5):.0f}%, over 90% {pct(of_sm > 0.9):.0f}%"
        )


if __name__ == "__main__":
    main()
