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
  against the per-SM limits of Hopper: 2,048 threads, 64 Ki registers,
  228 KiB shared memory, 32 blocks), at most 1. With C (the model's
  `corun_slowdown` for the victim's kind), the weight the model's
  `1 + C w o` would need: (stretch - 1) / (C x share).

    /tmp/hs/bin/python scripts/analysis/pressure.py JOB VICTIM [C]

Needs polars, pyarrow and numpy. Exit 2 on bad input.
"""
import sys

import numpy as np
import polars as pl
import pyarrow.parquet as pq


def kernels(path):
    t = pl.read_parquet(path).filter(pl.col("kind") == "kernel").sort("start_ns")
    if t.height == 0:
        raise ValueError(f"{path}: no kernels")
    return t


def per_sm(t):
    threads = (t["block_x"] * t["block_y"] * t["block_z"]).to_numpy().astype(float)
    regs = np.maximum(t["registers_per_thread"].to_numpy().astype(float), 1)
    smem = (t["static_shared_bytes"] + t["dynamic_shared_bytes"]).to_numpy().astype(float)
    warps = np.ceil(threads / 32)
    by_threads = np.floor(2048 / np.maximum(threads, 1))
    by_regs = np.floor(65536 / (np.ceil(regs * 32 / 256) * 256 * warps))
    by_smem = np.where(smem > 0, np.floor(233472 / (smem + 1024)), 32)
    return np.maximum(np.minimum.reduce([by_threads, by_regs, by_smem, np.full_like(by_threads, 32)]), 1)


def main(argv):
    if len(argv) not in (3, 4) or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        c = float(argv[3]) if len(argv) == 4 else None
        job, victim = kernels(argv[1]), kernels(argv[2])
        kv = pq.read_metadata(argv[1]).metadata or {}
    except Exception as e:  # noqa: BLE001 - any read failure is bad input
        print(f"cannot read: {e}", file=sys.stderr)
        return 2
    sms = int(kv.get(b"fikit.sm_count", b"0") or 0)
    if sms <= 0:
        print(f"{argv[1]}: no fikit.sm_count in its metadata", file=sys.stderr)
        return 2
    js, je = job["start_ns"].to_numpy(), job["end_ns"].to_numpy()
    order = np.argsort(js)
    ms, me = [], []
    for a, b in zip(js[order], je[order]):
        if ms and a <= me[-1]:
            me[-1] = max(me[-1], b)
        else:
            ms.append(a)
            me.append(b)
    ms, me = np.array(ms), np.array(me)
    cum = np.concatenate([[0], np.cumsum(me - ms)])

    def upto(x):
        i = np.searchsorted(ms, x, side="right") - 1
        k = np.maximum(i, 0)
        return cum[k] + np.where(i >= 0, np.clip(x - ms[k], 0, me[k] - ms[k]), 0)

    vs, ve = victim["start_ns"].to_numpy(), victim["end_ns"].to_numpy()
    vd = (ve - vs).astype(float)
    ov = (upto(ve) - upto(vs)) / np.maximum(vd, 1)
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
    share = np.minimum(1, blocks / (per_sm(job) * sms))
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
