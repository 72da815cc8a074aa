#!/usr/bin/env python3
"""Why a batch-1 request served open loop takes longer than a closed-loop
iteration (lab log 2026-11-28, issue 47's serving set on the H200).

One process, one model (resnet50 b1 eval by default), phases of N
requests each (sleep and spin once per period named), every request timed
on the host (wall, ending in a synchronize; host: until the forward call
returns, the launches) and on the GPU (CUDA events around it):
  closed  back to back;
  sleep   one every PERIOD ms, waiting with time.sleep (as workload.py);
  spin    one every PERIOD ms, waiting in a busy loop on the host;
  closed2 back to back again (drift check).
Prints one JSON line a phase: median and p90 of wall, host and GPU ms.

    python3 lab/validate/serve-idle.py [--model resnet50] [--n 200] [--period-ms 20[,50,...]]
"""

import argparse
import json
import statistics
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")  # a torchvision model
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--period-ms", default="20", help="comma-separated periods, ms")
    a = ap.parse_args()
    model = getattr(torchvision.models, a.model)().cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")

    def request():
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t = time.perf_counter()
        s.record()
        with torch.inference_mode():
            model(x)
        host = (time.perf_counter() - t) * 1e3
        e.record()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t) * 1e3
        return wall, s.elapsed_time(e), host

    for _ in range(30):
        request()
    periods = [float(p) for p in a.period_ms.split(",")]
    phases = [("closed", 0.0)] + [(m, p) for p in periods for m in ("sleep", "spin")] + [("closed2", 0.0)]
    for phase, period in phases:
        out = []
        nxt = time.perf_counter()
        for _ in range(a.n):
            if phase in ("sleep", "spin"):
                nxt += period / 1e3
                if phase == "sleep":
                    ahead = nxt - time.perf_counter()
                    if ahead > 0:
                        time.sleep(ahead)
                else:
                    while time.perf_counter() < nxt:
                        pass
            out.append(request())
        wall = sorted(w for w, _g, _h in out)
        gpu = sorted(g for _w, g, _h in out)
        host = sorted(h for _w, _g, h in out)
        q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
        print(json.dumps({
            "phase": phase,
            "period_ms": period,
            "wall_ms_p50": round(statistics.median(wall), 3),
            "wall_ms_p90": round(q(wall, 0.9), 3),
            "gpu_ms_p50": round(statistics.median(gpu), 3),
            "gpu_ms_p90": round(q(gpu, 0.9), 3),
            "host_ms_p50": round(statistics.median(host), 3),
            "host_ms_p90": round(q(host, 0.9), 3),
        }), flush=True)


if __name__ == "__main__":
    main()
