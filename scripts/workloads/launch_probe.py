#!/usr/bin/env python3
"""Host launch cost: a loop of tiny kernels (an in-place add on one element),
so the host's per-launch time, not the GPU, sets the pace. Each iteration is
--launches launches and a synchronize; for comparing the per-launch cost of
an injected library (fikit-run's gate, a tracer) against none.

    python3 scripts/workloads/launch_probe.py --iters 100 --launches 1000

Prints one JSON line last: {"iters", "launches", "ms_per_iter",
"ms_per_iter_median", "us_per_launch_median"}.
"""

import argparse
import json
import os
import time

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=100, help="timed iterations")
    p.add_argument("--launches", type=int, default=1000, help="launches per iteration")
    p.add_argument("--warmup", type=int, default=10, help="untimed iterations first")
    a = p.parse_args()
    x = torch.zeros(1, device="cuda")

    def step():
        for _ in range(a.launches):
            x.add_(1)
        torch.cuda.synchronize()

    for _ in range(a.warmup):
        step()
    per_iter = []
    t0 = time.perf_counter()
    for _ in range(a.iters):
        ti = time.perf_counter()
        step()
        per_iter.append(time.perf_counter() - ti)
    elapsed = time.perf_counter() - t0
    per_iter.sort()
    med = per_iter[len(per_iter) // 2]
    print(
        json.dumps(
            {
                "iters": a.iters,
                "launches": a.launches,
                "ms_per_iter": elapsed * 1000.0 / a.iters,
                "ms_per_iter_median": med * 1000.0,
                "us_per_launch_median": med * 1e6 / a.launches,
                "pid": os.getpid(),
                "torch": torch.__version__,
                "gpu": torch.cuda.get_device_name(0),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
