#!/usr/bin/env python3
"""Where a small job runs beside a busy partner under MPS, real against
simulated: in the partner kernels' tails (issue 45, lab log 2026-11-30).

From one traced MPS co-run of a pair (`lab/validate/mps-traced.sh`: both
jobs' traces, and the small job's trace alone, an exclusive round's) and the
same pair simulated from its profiles, aligned as that repetition
(`sim-corun-split.py`'s scenario; `fikit-sim export --perfetto --policy
mps`), over the small job's kernels after its first fifth:
- span, long waits (over 50 µs: count, total, mean), chains (small kernels
  between two long waits), small kernels per partner kernel, the partner's
  busy share;
- per partner kernel shape (`kernel_key`, matched by order: the same
  program), the small kernels started in its window (from its start to the
  next partner kernel's), real / simulated, the shapes that differ most;
- for one shape (KEY, default the one that differs most): where in the
  partner kernel the first small kernel starts, how many start inside it,
  and their time against the same kernels alone (matched by order); and by
  time over its last 0.4 in eighths: the share a small kernel ran, the small
  kernels started, their median stretch.

    /tmp/hs/bin/python lab/analysis/tail-windows.py FIKIT_SIM RUN_DIR SMALL_PROFILE PARTNER_PROFILE \\
        SMALL_CORUN PARTNER_CORUN SMALL_ALONE [MODEL [KEY]]

Exit 2 on bad input.
"""
import collections
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

_spec = importlib.util.spec_from_file_location("scs", Path(__file__).with_name("sim-corun-split.py"))
scs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scs)


def real(path, cut=True):
    """Kernels (start, end, wait) in start order; the first fifth cut."""
    o = pl.read_parquet(path).filter(pl.col("kind") == "kernel").sort("start_ns")
    if cut:
        o = o[o.height // 5 :]
    s, e = o["start_ns"].to_numpy().astype(float), o["end_ns"].to_numpy().astype(float)
    launch = o["launch_start_ns"].to_numpy().astype(float)
    prev = np.concatenate([[s[0]], np.maximum.accumulate(e)[:-1]])
    return np.stack([s, e, np.maximum(0, s - np.maximum(launch, prev))], 1)


def simulated(sim, run_dir, small_profile, partner_profile, model):
    """Small job's kernels (start, end, waited, recorded) after its first
    fifth, and all the partner's (start, end, waited), from the export."""
    sc = scs.scenario(run_dir, small_profile, partner_profile, 1)
    with tempfile.TemporaryDirectory() as tmp:
        s, p = scs.kernels(scs.export(sim, sc, model, tmp))
    # (start, duration, recorded, waited) as (start, end, waited, recorded).
    s = np.stack([s[:, 0], s[:, 0] + s[:, 1], s[:, 3], s[:, 2]], 1)
    return s, np.stack([p[:, 0], p[:, 0] + p[:, 1], p[:, 3]], 1)


def overall(name, s, p):
    t0, t1 = s[0, 0], s[-1, 1]
    p = p[(p[:, 0] >= t0) & (p[:, 1] <= t1)]
    w = s[:, 2]
    brk = np.where(w > 50e3)[0]
    chains = np.diff(np.concatenate([brk, [len(s)]]))
    print(
        f"{name}: span {(t1 - t0) / 1e6:.0f} ms, {len(s)} small kernels ({(s[:, 1] - s[:, 0]).sum() / 1e6:.0f} ms), "
        f"{len(p)} partner kernels (busy {(p[:, 1] - p[:, 0]).sum() / (t1 - t0):.2f}), small per partner {len(s) / len(p):.2f}; "
        f"long waits {len(brk)}, {w[brk].sum() / 1e6:.0f} ms, mean {w[brk].mean() / 1e3:.0f} µs; chain mean {chains.mean():.2f}"
    )


def main(argv):
    if len(argv) not in (8, 9, 10):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sim, run_dir, small_profile, partner_profile, small_corun, partner_corun, small_alone = argv[1:8]
    model = argv[8] if len(argv) > 8 else None
    try:
        rs, rp, ra = real(small_corun), real(partner_corun, cut=False), real(small_alone)
        ss, sp = simulated(sim, run_dir, small_profile, partner_profile, model)
        pk = pl.read_parquet(partner_corun).filter(pl.col("kind") == "kernel").sort("start_ns")
    except (OSError, ValueError, KeyError, StopIteration, pl.exceptions.PolarsError) as e:
        print(f"tail-windows.py: {e}", file=sys.stderr)
        return 2
    if len(ra) != len(rs):
        print(f"tail-windows.py: {small_alone} has {len(ra)} kernels after its first fifth, {small_corun} {len(rs)}", file=sys.stderr)
        return 2
    overall("real", rs, rp)
    overall("sim ", ss, sp)

    def per_partner(s, p):
        i = np.searchsorted(p[:, 0], s[:, 0], side="right") - 1
        return np.bincount(i[i >= 0], minlength=len(p))

    cr, cs = per_partner(rs, rp), per_partner(ss, sp)
    n = min(len(rp), len(sp), pk.height)
    lo = max(np.searchsorted(rp[:, 0], rs[0, 0]), np.searchsorted(sp[:, 0], ss[0, 0]))
    hi = min(np.searchsorted(rp[:, 0], rs[-1, 1]), np.searchsorted(sp[:, 0], ss[-1, 1]), n)
    key = pk["kernel_key"].to_numpy()[:n]
    grid = (pk["grid_x"] * pk["grid_y"] * pk["grid_z"]).to_numpy()[:n]
    agg = collections.defaultdict(lambda: [0, 0, 0, 0.0, 0])
    for i in range(lo, hi):
        a = agg[key[i]]
        a[0] += 1
        a[1] += cr[i]
        a[2] += cs[i]
        a[3] += rp[i, 1] - rp[i, 0]
        a[4] = grid[i]
    rows = sorted(agg.items(), key=lambda kv: -abs(kv[1][2] - kv[1][1]))
    print("partner kernel shapes, most differing first: key, launches, grid, real µs, small kernels in its window real / sim")
    for k, a in rows[:8]:
        print(f"  {k:>20}: {a[0]:6d} grid {a[4]:6d} {a[3] / a[0] / 1e3:7.1f} µs  {a[1] / a[0]:6.2f} / {a[2] / a[0]:6.2f}")
    chosen = int(argv[9]) if len(argv) > 9 else rows[0][0]
    sel = [i for i in range(lo, hi) if key[i] == chosen]
    if not sel:
        print(f"tail-windows.py: no partner kernel {chosen} in the common span", file=sys.stderr)
        return 2
    row = pk.filter(pl.col("kernel_key") == chosen).row(0, named=True)
    shape = {c: row[c] for c in ("grid_x", "grid_y", "block_x", "registers_per_thread", "dynamic_shared_bytes", "static_shared_bytes")}
    print(f"partner kernel {chosen}: {shape}")
    for name, s, p, alone in (("real", rs, rp, ra[:, 1] - ra[:, 0]), ("sim ", ss, sp, ss[:, 3])):
        first, inside = [], []
        for i in sel:
            j = np.where((s[:, 0] >= p[i, 0]) & (s[:, 0] < p[i, 1]))[0]
            if len(j):
                first.append((s[j[0], 0] - p[i, 0]) / (p[i, 1] - p[i, 0]))
            inside.extend(j.tolist())
        inside = np.array(inside, dtype=int)
        d = s[inside, 1] - s[inside, 0]
        print(
            f"{name}: first small kernel at {np.median(first):.3f} of the partner kernel (median), "
            f"{len(inside) / len(sel):.2f} started inside it, their time {d.sum() / alone[inside].sum():.2f}x alone"
        )
        by_time(s, p, alone, sel)
    return 0


def by_time(s, p, alone, sel):
    """The partner kernels' last 0.4 in eighths: the share of each eighth a
    small kernel ran, small kernels started in it per partner kernel, and
    their median time over alone."""
    edges = np.linspace(0.6, 1.0, 9)
    running, started = np.zeros(8), np.zeros(8)
    stretch = [[] for _ in range(8)]
    for i in sel:
        a, b = p[i, 0], p[i, 1]
        span = b - a
        for j in np.where((s[:, 1] > a + 0.6 * span) & (s[:, 0] < b))[0]:
            x0, x1 = (max(s[j, 0], a) - a) / span, (min(s[j, 1], b) - a) / span
            running += np.clip(np.minimum(x1, edges[1:]) - np.maximum(x0, edges[:-1]), 0, None) / 0.05
            q = np.searchsorted(edges, (s[j, 0] - a) / span) - 1
            if 0 <= q < 8:
                started[q] += 1
                stretch[q].append((s[j, 1] - s[j, 0]) / max(alone[j], 1))
    n = len(sel)
    print("      eighths of the last 0.4: " + " ".join(f"{e:5.2f}" for e in edges[:-1]))
    print("      small kernel running:    " + " ".join(f"{r / n:5.2f}" for r in running))
    print("      started per kernel:      " + " ".join(f"{c / n:5.2f}" for c in started))
    print("      their median stretch:    " + " ".join(f"{np.median(x) if x else float('nan'):5.2f}" for x in stretch))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
