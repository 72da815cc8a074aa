#!/usr/bin/env python3
"""How hard a job's kernels press on a neighbour: the pressure pass's two
traces (scripts/validate/pressure.sh: JOB, the job's own trace, and VICTIM,
the trace of `fikit-sim load --victim` run back to back beside it under MPS).
The traces share the host's clock (CUPTI's timestamps).

- The victim alone: the median of its runs that ended before the job's first
  kernel.
- Beside the job, over the job's steady part (after the first fifth of its
  kernels): the victim's runs that the job's kernels overlapped wholly, their
  median stretch and quartiles; and how much of the victim's time the job's
  kernels overlapped at all.
- A fit over all the steady runs, wholly overlapped or not: a run that the
  job's kernels overlapped for `t` of its `d` ran `d - alone = t (1 - 1/s)`,
  `s` the victim's slowdown while overlapped; least squares for `1 - 1/s`.
  It needs the victim to find room at once (a batch-1 job's kernels leave
  it); beside a job that fills the SMs, waiting for room inflates it.
- The job's one-wave SM share, time-weighted over its kernel time: its blocks
  over what fits on the SMs at once (threads, registers, shared memory
  against the per-SM limits in the job trace's metadata, as corun-pair.py
  counts them), at most 1. With C (the model's
  `corun_slowdown` for the victim's kind), the weight the model's
  `1 + C w o` would need: (stretch - 1) / (C x share).

    /tmp/hs/bin/python scripts/analysis/pressure.py JOB VICTIM [C]

Needs polars, pyarrow and numpy, and corun-pair.py beside it. Exit 2 on bad input.
"""
import importlib.util
import os
import sys

import numpy as np
import polars as pl

_spec = importlib.util.spec_from_file_location("corun_pair", os.path.join(os.path.dirname(__file__), "corun-pair.py"))
corun_pair = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corun_pair)


def kernels(path):
    t = pl.read_parquet(path).filter(pl.col("kind") == "kernel").sort("start_ns")
    if t.height == 0:
        raise ValueError(f"{path}: no kernels")
    return t


def main(argv):
    if len(argv) not in (3, 4) or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        c = float(argv[3]) if len(argv) == 4 else None
        job, victim = kernels(argv[1]), kernels(argv[2])
        dev = corun_pair.device(argv[1])
    except Exception as e:  # noqa: BLE001 - any read failure is bad input
        print(f"cannot read: {e}", file=sys.stderr)
        return 2
    js, je = job["start_ns"].to_numpy(), job["end_ns"].to_numpy()
    vs, ve = victim["start_ns"].to_numpy(), victim["end_ns"].to_numpy()
    vd = (ve - vs).astype(float)
    ov = corun_pair.covered(vs, ve, js, je)
    before = vd[ve < js.min()]
    if len(before) < 10:
        print(f"{argv[2]}: fewer than 10 victim runs before the job's first kernel", file=sys.stderr)
        return 2
    alone = float(np.median(before))
    first = np.sort(js)[len(js) // 5]
    in_steady = (vs > first) & (ve < je.max())
    if in_steady.sum() < 10:
        print(f"{argv[2]}: fewer than 10 victim runs inside the job's steady part", file=sys.stderr)
        return 2
    whole = vd[in_steady & (ov > 0.99)] / alone
    blocks = (job["grid_x"] * job["grid_y"] * job["grid_z"]).to_numpy().astype(float)
    share = np.minimum(1, blocks / (corun_pair.per_sm(job, dev) * dev["sm_count"]))
    dur = (je - js).astype(float)
    late = js > first
    w_bar = float(np.sum(share[late] * dur[late]) / np.sum(dur[late]))
    busy = float(np.sum((ov * vd)[in_steady]) / np.sum(vd[in_steady]))
    t = (ov * vd)[in_steady]
    extra = (vd - alone)[in_steady]
    b = float(np.sum(extra * t) / np.sum(t * t)) if np.sum(t * t) > 0 else float("nan")
    fit = f"{1 / (1 - b):.2f}x" if b < 1 else "past any slowdown (b >= 1)"
    line = (
        f"{argv[1]}: victim alone {alone / 1e3:.0f} us ({len(before)} runs); steady: {in_steady.sum()} runs, "
        f"{busy:.2f} of their time overlapped by the job's kernels, fit {fit}; "
    )
    if len(whole) >= 10:
        p = float(np.median(whole))
        line += (
            f"{len(whole)} wholly overlapped: {p:.2f}x [{np.percentile(whole, 25):.2f}-{np.percentile(whole, 75):.2f}]; "
            f"the job's one-wave share {w_bar:.2f}"
        )
        if c:
            line += f"; weight (stretch - 1) / (C share) {(p - 1) / (c * w_bar):.2f}"
    else:
        line += f"{len(whole)} wholly overlapped (too few for a figure); the job's one-wave share {w_bar:.2f}"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
