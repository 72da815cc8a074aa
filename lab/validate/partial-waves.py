#!/usr/bin/env python3
"""Does a kernel's partial last wave run in a full wave's block time?
(issue 45, lab log 2026-11-30; design and rule fixed before it ran.)

The simulator runs a kernel of W = B / (p S) waves alone as ceil(W) waves of
equal block time D / ceil(W) (`simulator/core/src/sim/slots.rs`), so a
partner's last, thin wave holds its few blocks for a whole block time and
other jobs' kernels run beside it from (ceil(W) - 1) / ceil(W) of the
kernel. A synthetic kernel whose blocks wait on memory one load at a time
keeps that shape on the H200 (reports/validation/mps-smid-2026-11-30); the
batch-1 jobs beside real cuDNN kernels start later in them and fit fewer
kernels in their tails than the model does. If a block with fewer siblings
on its SM runs faster, the last wave is shorter than a block time.

`run` sweeps the batch of a few common layers (cuDNN convolutions and cuBLAS
GEMMs of the validation sets' models, eval, the workload's default precision)
over 1..N and records every kernel's name, grid, block, registers, shared
memory and time (torch.profiler, median of REPS runs) into OUT/waves.csv.
`read` takes, for each kernel name seen at 6 grids or more spanning at least
two whole-wave counts, its blocks per SM p from its registers, shared memory
and threads against the H200's per-SM limits (the simulator's occupancy), its
waves W = B / (132 p), and fits t = a + b f(W) for f = ceil(W) (the model)
and f = W (a last wave in proportion to its fill), least squares.
It also fits the last wave's share of a block time as s = g + (1 - g) u, u
its fill (W less its whole waves; 1 for a whole wave): t = a + b ceil(W) +
c u by least squares, g = 1 - c / b (g = 1: the model; g = 0: in
proportion).
Rule, on the median g over kernel names: at least 0.8, the model's equal
waves stand; at most 0.5, a partial last wave runs faster nearly in
proportion to its fill; between, partly. Below 0.8, the median g (a
calibration of the hardware and its libraries, not of any pair) is the
candidate for the model's waves alone (the last wave's block time s times
the others', its kernel's time alone kept), to be judged in sample before
it may enter the model.

    python3 lab/validate/partial-waves.py run OUT [N] [REPS]
    python3 lab/validate/partial-waves.py read OUT/waves.csv
"""
import csv
import json
import math
import sys


LAYERS = {
    # name: (builder(batch) -> (module, input))
    "conv3x3-64-56": lambda n, t: (t.nn.Conv2d(64, 64, 3, padding=1), t.randn(n, 64, 56, 56)),
    "conv3x3-128-28": lambda n, t: (t.nn.Conv2d(128, 128, 3, padding=1), t.randn(n, 128, 28, 28)),
    "conv3x3-256-14": lambda n, t: (t.nn.Conv2d(256, 256, 3, padding=1), t.randn(n, 256, 14, 14)),
    "conv1x1-256-1024-14": lambda n, t: (t.nn.Conv2d(256, 1024, 1), t.randn(n, 256, 14, 14)),
    "dwconv7x7-384-14": lambda n, t: (t.nn.Conv2d(384, 384, 7, padding=3, groups=384), t.randn(n, 384, 14, 14)),
    "linear-768-3072-50": lambda n, t: (t.nn.Linear(768, 3072), t.randn(n, 50, 768)),
    "linear-768-768-197": lambda n, t: (t.nn.Linear(768, 768), t.randn(n, 197, 768)),
}


def run(out, n_max, reps):
    import os
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    rows = []
    for name, build in LAYERS.items():
        for n in range(1, n_max + 1):
            mod, x = build(n, torch)
            mod, x = mod.cuda().eval(), x.cuda()
            with torch.no_grad():
                for _ in range(3):
                    mod(x)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(reps):
                        mod(x)
                    torch.cuda.synchronize()
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "t.json")
                prof.export_chrome_trace(path)
                ev = json.load(open(path))["traceEvents"]
            seen = {}
            for e in ev:
                if e.get("cat") != "kernel":
                    continue
                a = e.get("args", {})
                key = (e["name"], tuple(a.get("grid", [0])), tuple(a.get("block", [0])))
                seen.setdefault(key, (a, []))[1].append(e["dur"])
            for (kname, grid, block), (a, durs) in seen.items():
                durs.sort()
                rows.append({
                    "layer": name, "batch": n, "kernel": kname[:200],
                    "blocks": math.prod(grid), "threads": math.prod(block),
                    "registers": a.get("registers per thread", 0),
                    "shared": a.get("shared memory", 0),
                    "us": durs[len(durs) // 2], "runs": len(durs),
                })
            del mod, x
        print(f"{name}: done", flush=True)
    with open(f"{out}/waves.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows, {torch.cuda.get_device_name()}")


def per_sm(threads, regs, shared):
    """Blocks of one kernel an H200 SM holds (the simulator's occupancy,
    simplified: warps of 32, registers by 256 a warp, shared memory with 1
    KB reserved a block)."""
    warps = math.ceil(threads / 32)
    by_threads = 2048 // max(threads, 1)
    by_regs = 65536 // max(warps * math.ceil(max(regs, 1) * 32 / 256) * 256, 1)
    by_smem = 233472 // (shared + 1024) if shared else 32
    return max(1, min(by_threads, by_regs, by_smem, 32))


def fit(xs, ys):
    """Least squares y = a + b x: (a, b, rms)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0, math.sqrt(sum((y - my) ** 2 for y in ys) / n)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    return a, b, math.sqrt(sum((y - a - b * x) ** 2 for x, y in zip(xs, ys)) / n)


def read(path):
    rows = list(csv.DictReader(open(path)))
    by = {}
    for r in rows:
        p = per_sm(int(r["threads"]), int(r["registers"]), int(r["shared"]))
        w = int(r["blocks"]) / (132 * p)
        by.setdefault((r["layer"], r["kernel"]), []).append((w, float(r["us"])))
    import numpy as np

    ratios, gs = [], []
    for (layer, kernel), pts in sorted(by.items()):
        pts = sorted(set(pts))
        if len(pts) < 6 or len({math.ceil(w) for w, _ in pts}) < 2 or max(w for w, _ in pts) < 1.0:
            continue
        xs, ys = [w for w, _ in pts], [t for _, t in pts]
        _, bc, rc = fit([math.ceil(x) for x in xs], ys)
        _, bp, rp = fit(xs, ys)
        ratios.append(rp / rc if rc > 0 else float("inf"))
        fill = [x - math.ceil(x) + 1 for x in xs]
        m = np.column_stack([np.ones(len(xs)), [math.ceil(x) for x in xs], fill])
        (_, b, c), *_ = np.linalg.lstsq(m, np.array(ys), rcond=None)
        g = 1 - c / b if b > 0 else float("nan")
        if math.isfinite(g):
            gs.append(g)
        print(f"{layer:22s} {kernel[:60]:60s} n={len(pts):2d} W {xs[0]:.2f}-{xs[-1]:.2f}: rms ceil {rc:.1f} us, proportional {rp:.1f} us ({rp / rc if rc else float('inf'):.2f}); block {b:.1f} us, g {g:.2f}")
    if ratios:
        ratios.sort()
        med = ratios[len(ratios) // 2]
        print(f"{len(ratios)} kernels; median RMS ratio proportional / ceil {med:.2f}")
    if gs:
        gs.sort()
        g = gs[len(gs) // 2]
        verdict = ("the model's equal waves stand" if g >= 0.8 else
                   "a partial last wave runs nearly in proportion to its fill" if g <= 0.5 else "partly faster")
        print(f"{len(gs)} kernels; g median {g:.2f} [p25 {gs[len(gs) // 4]:.2f}, p75 {gs[3 * len(gs) // 4]:.2f}]: {verdict}")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40, int(sys.argv[4]) if len(sys.argv) > 4 else 7)
    else:
        read(sys.argv[2])
