#!/usr/bin/env python3
"""Whether a job's launch calls wait on its own backlog: for each kernel
launch of a fikit trace, the launch call's duration and how many of the job's
kernels were launched but had not ended when the call began, in bands of that
backlog (median and p90 call time per band). A job that launches thousands of
kernels between synchronizations (a decoder generating tokens on the GPU) and
is slowed on the GPU builds a backlog; CUDA's launch queue is bounded, so its
launch calls then wait for room.

    /tmp/hs/bin/python lab/analysis/launch-backlog.py TRACE.parquet ...

Needs polars and numpy.
"""
import sys

import numpy as np
import polars as pl

if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(2)
NEEDED = ["kind", "launch_start_ns", "launch_end_ns", "end_ns"]
for f in sys.argv[1:]:
    try:
        t = pl.read_parquet(f)
    except Exception as e:  # a missing or unreadable file: say which, exit 2
        print(f"{f}: {e}", file=sys.stderr)
        sys.exit(2)
    missing = [c for c in NEEDED if c not in t.columns]
    if missing:
        print(f"{f}: not a fikit trace with launch times (no column {', '.join(missing)})", file=sys.stderr)
        sys.exit(2)
    # Kernels whose launch call was recorded (the launch columns are optional).
    k = (
        t.filter((pl.col("kind") == "kernel") & pl.col("launch_start_ns").is_not_null() & pl.col("launch_end_ns").is_not_null())
        .sort("launch_start_ns", maintain_order=True)
    )
    if k.height == 0:
        print(f"{f}: no kernel with a recorded launch call", file=sys.stderr)
        sys.exit(2)
    ls = k["launch_start_ns"].to_numpy()
    le = k["launch_end_ns"].to_numpy()
    ke = np.sort(k["end_ns"].to_numpy())
    dur = (le - ls) / 1e3
    # Backlog at a call's start: kernels launched before it, less those ended by then.
    ended = np.searchsorted(ke, ls, side="right")
    out = np.arange(len(ls)) - ended
    print(f, "launches", len(ls), "median call us %.1f" % np.median(dur))
    for lo, hi in [(0, 16), (16, 128), (128, 512), (512, 900), (900, 1100), (1100, 10**9)]:
        m = (out >= lo) & (out < hi)
        if m.sum():
            print(f"  outstanding {lo}-{hi}: {m.sum():7d} launches, call median {np.median(dur[m]):6.1f} us, p90 {np.percentile(dur[m], 90):7.1f}")
