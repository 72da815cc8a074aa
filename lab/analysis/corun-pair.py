#!/usr/bin/env python3
"""What a busy partner does to a small job under MPS, from both jobs' traces
of one co-run (`fikit-run scenario --trace DIR`:
DIR/mps-N/<job>-<pid>.parquet) and the small job's trace alone (its
profile, or an exclusive round's trace). The traces share the host's clock
(CUPTI's timestamps); the first fifth of the small job's operations (model
load, warm-up) is left out.

- Waits: an operation's wait is its start minus the later of its launch and
  the previous operation's end (as in start-waits.py). For the long waits,
  which partner kernel ran when the operation became ready, where in that
  kernel the operation started, and what the MPS model's rule gives on the
  same partner kernel (blocks placed in order of readiness, waves of
  `per_sm x SMs` blocks, a block of the small job placed when the partner's
  last, partial wave is placed, else when it ends); how many of them ended
  after that kernel did, and the waits and the rule by how full its last
  wave was.
- Kernel stretch: the small job's kernels, co-run against alone (matched by
  their order: the same program), by how much of each a partner kernel
  overlapped, by the partner kernel's one-wave SM share (its blocks over
  `per_sm x SMs`, at most 1: what it presses on) and by the small kernel's
  grid.
- With PARTNER_ALONE (the partner's trace alone): the partner's kernels in
  the small job's span, co-run against alone (matched by order), by how
  much of each the small job's kernels overlapped.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars numpy
    /tmp/hs/bin/python lab/analysis/corun-pair.py SMALL_ALONE SMALL_CORUN PARTNER_CORUN [PARTNER_ALONE]
"""
import sys

import numpy as np
import polars as pl
import pyarrow.parquet as pq


def device(path):
    """Per-SM limits and SM count from a trace's metadata."""
    m = {k.decode(): v.decode() for k, v in pq.read_metadata(path).metadata.items()}
    return {k: int(m[f"fikit.{k}"]) for k in ("sm_count", "max_threads_per_sm", "max_registers_per_sm", "max_shared_memory_per_sm", "max_blocks_per_sm")}


def ops(path, kinds):
    d = pl.read_parquet(path).filter(pl.col("kind").is_in(kinds)).filter(pl.col("launch_start_ns").is_not_null()).sort("start_ns")
    if d.height == 0:
        raise ValueError(f"{path}: no {'/'.join(kinds)} operations with launch times")
    return d


def per_sm(d, dev):
    """Blocks of each kernel that fit on one SM (as the simulator's blocks_per_sm)."""
    thr = np.maximum((d["block_x"] * d["block_y"] * d["block_z"]).to_numpy().astype(np.int64), 1)
    regs = np.maximum(d["registers_per_thread"].to_numpy().astype(np.int64), 1) * thr
    sh = (d["static_shared_bytes"] + d["dynamic_shared_bytes"]).to_numpy().astype(np.int64)
    by_sh = np.where(sh > 0, dev["max_shared_memory_per_sm"] // np.maximum(sh, 1), 1 << 40)
    p = np.minimum.reduce([dev["max_threads_per_sm"] // thr, dev["max_registers_per_sm"] // regs, by_sh, np.full_like(thr, dev["max_blocks_per_sm"])])
    return np.maximum(p, 1)


def pct(a, q):
    return np.percentile(a, q) / 1e3 if len(a) else float("nan")


def overlap(starts, ends, other_starts, other_ends, weights=None):
    """Per span, the share of it that the other spans (sorted, not
    overlapping each other) cover, and the same with each other span's
    cover times its weight."""
    first = np.searchsorted(other_ends, starts, side="right")
    covered, weighted = np.zeros(len(starts)), np.zeros(len(starts))
    for i in range(len(starts)):
        n = first[i]
        while n < len(other_starts) and other_starts[n] < ends[i]:
            o = max(0, min(other_ends[n], ends[i]) - max(other_starts[n], starts[i]))
            covered[i] += o
            weighted[i] += o * (1.0 if weights is None else weights[n])
            n += 1
    span = np.maximum(ends - starts, 1)
    return covered / span, weighted / span


def covered(starts, ends, other_starts, other_ends):
    """Per span, the share of it that the union of the other spans covers
    (they may overlap one another and come in any order)."""
    order = np.argsort(other_starts)
    ms, me = [], []
    for a, b in zip(other_starts[order], other_ends[order]):
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

    return (upto(ends) - upto(starts)) / np.maximum(ends - starts, 1)


def partner_stretch(partner_alone_path, p, ks, ke):
    """The partner's kernels in the small job's span, co-run against alone."""
    a = ops(partner_alone_path, ["kernel"])
    if a.height != p.height:
        raise ValueError(f"{partner_alone_path} has {a.height} kernels and the co-run partner {p.height}: not the same program")
    ps, pe = p["start_ns"].to_numpy(), p["end_ns"].to_numpy()
    da = (a["end_ns"] - a["start_ns"]).to_numpy()
    dp = pe - ps
    inside = (pe > ks[0]) & (ps < ke[-1])
    over, _ = overlap(ps, pe, ks, ke)
    print(f"the partner's kernels in the small job's span: {inside.sum()}, {da[inside].sum() / 1e6:.1f} ms alone, {dp[inside].sum() / da[inside].sum():.3f}x; by the share of each the small job's kernels overlapped:")
    for lo, hi in [(0, 0.01), (0.01, 0.25), (0.25, 0.5), (0.5, 1.01)]:
        m = inside & (over >= lo) & (over < hi)
        if m.sum():
            print(f"  {lo:.2f}-{hi:.2f}: {m.sum()} kernels, {da[m].sum() / 1e6:.1f} ms alone, {dp[m].sum() / da[m].sum():.3f}x")


def main(alone_path, small_path, partner_path, partner_alone_path=None):
    dev = device(partner_path)
    sms = dev["sm_count"]
    small = ops(small_path, ["kernel", "memset", "memcpy"])
    v = small.slice(small.height // 5, small.height - small.height // 5)
    p = ops(partner_path, ["kernel"])
    ps, pe = p["start_ns"].to_numpy(), p["end_ns"].to_numpy()
    blocks = (p["grid_x"] * p["grid_y"] * p["grid_z"]).to_numpy().astype(np.int64)
    cap = per_sm(p, dev) * sms
    waves = -(-blocks // cap)
    fill = (blocks - (waves - 1) * cap) / cap
    share = np.minimum(1.0, blocks / cap)

    # Waits.
    vs, ve, vl = v["start_ns"].to_numpy(), v["end_ns"].to_numpy(), v["launch_start_ns"].to_numpy()
    prev = np.maximum.accumulate(np.concatenate([[vs[0]], ve[:-1]]))
    ready = np.maximum(vl, prev)
    wait = np.maximum(0, vs - ready)
    t0, t1 = vs[0], ve[-1]
    inside = (pe > t0) & (ps < t1)
    print(f"{small_path}: {v.height} operations over {(t1 - t0) / 1e6:.1f} ms; the partner ran {inside.sum()} kernels then, busy {((np.minimum(pe[inside], t1) - np.maximum(ps[inside], t0)).sum() / (t1 - t0)):.0%} of it")
    print(f"waits: {wait.sum() / 1e6:.1f} ms, per operation p50 {pct(wait, 50):.1f} µs, p90 {pct(wait, 90):.1f} µs")
    j = np.searchsorted(ps, ready, side="right") - 1
    running = (j >= 0) & (pe[np.maximum(j, 0)] > ready)
    print(f"operations ready while a partner kernel ran: {running.mean():.0%}")
    long = running & (wait > 50_000)
    jl = j[long]
    d = pe[jl] - ps[jl]
    at = (vs[long] - ps[jl]) / d
    rule = np.where(fill[jl] < 1.0, (waves[jl] - 1) / waves[jl], 1.0)
    rule_wait = np.maximum(0.0, rule - (ready[long] - ps[jl]) / d) * d
    print(f"waits over 50 µs: {long.sum()} operations, {wait[long].sum() / 1e6:.1f} ms; the partner kernel's waves p50 {np.median(waves[jl]):.0f}, its last wave's fill p50 {np.median(fill[jl]):.2f}")
    print(f"  started at {np.percentile(at, 10):.3f} / {np.median(at):.3f} / {np.percentile(at, 90):.3f} (p10/p50/p90) of that kernel, {np.median(vs[long] - pe[jl]) / 1e3:+.1f} µs from its end (p50)")
    print(f"  the model's rule on the same partner kernels: {rule_wait.sum() / 1e6:.1f} ms of waits")
    past = vs[long] > pe[jl]
    print(f"  past that partner kernel's end: {past.mean():.0%} of them, {np.maximum(0, vs[long] - pe[jl]).sum() / 1e6:.1f} ms of their waits")
    for lo, hi in [(0, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 1.01)]:
        m = (fill[jl] >= lo) & (fill[jl] < hi)
        if m.sum():
            print(f"  its last wave {lo:.2f}-{hi:.2f} full: {m.sum()} waits, {wait[long][m].sum() / 1e6:.1f} ms, the rule {rule_wait[m].sum() / 1e6:.1f} ms")

    # Kernel stretch.
    a = ops(alone_path, ["kernel"])
    k = small.filter(pl.col("kind") == "kernel")
    if a.height != k.height:
        raise ValueError(f"{alone_path} has {a.height} kernels and {small_path} {k.height}: not the same program")
    cut = k.height // 5
    da = (a["end_ns"] - a["start_ns"]).to_numpy()[cut:]
    ks, ke = k["start_ns"].to_numpy()[cut:], k["end_ns"].to_numpy()[cut:]
    dk = ke - ks
    kb = (k["grid_x"] * k["grid_y"] * k["grid_z"]).to_numpy()[cut:].astype(np.int64)
    over, pressed = overlap(ks, ke, ps, pe, share)

    def row(label, m):
        if m.sum():
            print(f"  {label}: {m.sum()} kernels, {da[m].sum() / 1e6:.1f} ms alone, {dk[m].sum() / da[m].sum():.2f}x")

    print(f"kernels: {da.sum() / 1e6:.1f} ms alone, {dk.sum() / 1e6:.1f} ms beside the partner ({dk.sum() / da.sum():.2f}x)")
    print("by the share of the kernel a partner kernel overlapped:")
    for lo, hi in [(0, 0.01), (0.01, 0.5), (0.5, 0.99), (0.99, 1.01)]:
        row(f"{lo:.2f}-{hi:.2f}", (over >= lo) & (over < hi))
    m = over >= 0.5
    print(f"overlapped at least half: the partner kernels' one-wave SM share, time-weighted, {(pressed[m] * dk[m]).sum() / (over[m] * dk[m]).sum():.2f}; by that share:")
    for lo, hi in [(0, 0.5), (0.5, 0.75), (0.75, 0.99), (0.99, 1.01)]:
        row(f"{lo:.2f}-{hi:.2f}", m & (pressed / np.maximum(over, 1e-9) >= lo) & (pressed / np.maximum(over, 1e-9) < hi))
    print("by the small kernel's blocks:")
    for lo, hi in [(1, sms // 4 + 1), (sms // 4 + 1, sms + 1), (sms + 1, 4 * sms + 1), (4 * sms + 1, 1 << 40)]:
        row(f"{lo}-{hi - 1}" if hi < 1 << 40 else f"{lo}+", m & (kb >= lo) & (kb < hi))
    if partner_alone_path:
        partner_stretch(partner_alone_path, p, ks, ke)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    try:
        main(*sys.argv[1:])
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"corun-pair.py: {e}")
