#!/usr/bin/env python3
"""Is a request served open loop slower than the same request back to back?
Interleaved in each process, over fresh processes (issue 47; design and
rule fixed 2026-11-28 before any run, lab log).

One process = one model (workload.py's `build`, batch 1, eval), 30
warm-up requests, then BLOCKS blocks of N requests alternating between
  B  back to back (each request starts when the one before is done);
  S  served: Poisson arrivals at RATE a second, waiting with time.sleep as
     workload.py --rate does (a request starts at the later of its arrival
     and the previous one's end).
Even process indices start with B, odd ones with S, so a drift over the
process falls on both kinds alike. A request's service time runs from its
start to its result on the host (torch.cuda.synchronize returned); its
launch time until the forward call returned; its GPU time between CUDA
events recorded around it. Prints one JSON line: per block its kind and
medians, and the CPUs the requests started on.

    python3 lab/validate/serve-interleave.py --model resnet50 --index 0

The rule (per model, over its unpinned processes, at least 4): R = median
service time of the process's S requests / that of its B requests. Served
requests are slower for a model when the median R exceeds 1.10 and R
exceeds 1.05 in all but at most one process. If that holds for at least 2
of the 3 models (resnet50, mobilenet_v3_large, bert-base), a server is to
be characterized as served (open loop) and judged on a new set; if not,
the serving rounds' gap is the host's variation between processes, to be
shown as a range, not modelled. Pinned processes (taskset to one CPU) are
a second reading, outside the rule.
"""

import argparse
import ctypes
import json
import os
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "workloads"))
from workload import build  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--index", type=int, default=0, help="process index: even starts with B")
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--n", type=int, default=100, help="requests a block")
    ap.add_argument("--rate", type=float, default=50.0)
    a = ap.parse_args()
    torch.manual_seed(0)
    getcpu = ctypes.CDLL(None).sched_getcpu
    model, make_input, _ = build(a.model, 1, 128, torch.device("cuda"))
    model.eval()
    inp = make_input()

    def request():
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = time.perf_counter()
        s.record()
        with torch.inference_mode():
            model(*inp)
        launch = time.perf_counter() - t
        e.record()
        torch.cuda.synchronize()
        return time.perf_counter() - t, launch, s, e

    for _ in range(30):
        request()
    rng = random.Random(1000 * a.index + 7)
    blocks = []
    for b in range(a.blocks):
        kind = "BS"[(b + a.index) % 2]
        out, cpus = [], set()
        due = time.perf_counter()
        for _ in range(a.n):
            if kind == "S":
                due += rng.expovariate(a.rate)
                ahead = due - time.perf_counter()
                if ahead > 0:
                    time.sleep(ahead)
            cpus.add(getcpu())
            out.append(request())
        med = lambda v: round(statistics.median(v) * 1e3, 4)
        blocks.append({
            "kind": kind,
            "service_ms": med([w for w, _l, _s, _e in out]),
            "launch_ms": med([l for _w, l, _s, _e in out]),
            "gpu_ms": round(statistics.median(s.elapsed_time(e) for _w, _l, s, e in out), 4),
            "service_ms_all": [round(w * 1e3, 4) for w, _l, _s, _e in out],
            "cpus": sorted(cpus),
        })
    print(json.dumps({
        "model": a.model,
        "index": a.index,
        "pinned": len(os.sched_getaffinity(0)) == 1,
        "rate": a.rate,
        "blocks": blocks,
    }), flush=True)


if __name__ == "__main__":
    main()
