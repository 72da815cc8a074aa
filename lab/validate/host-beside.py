#!/usr/bin/env python3
"""How fast a launch-bound job's host runs beside another job: a probe for
the simulator's `corun_host_slowdown` (issue 15).

A victim process issues iterations of LAUNCHES tiny kernels (an in-place add
on a 1-element tensor) and then synchronizes. Each iteration's issue time
(first launch to the return of the last, before the synchronization: fewer
launches than the queue holds, so no launch waits for the GPU) is the host's
speed: Python and the CUDA launch path. It runs in these conditions, in
turns, ROUNDS times:

- alone;
- cpu: beside a process that spins one CPU (a Python busy loop, no GPU);
- gpu: beside a GPU job (bf16 matrix products of 8192, synchronized every
  product with CUDA's default schedule, which spins a CPU while it waits),
  under default time slicing;
- gpu-mps: the same under MPS (a daemon with a private pipe folder);
- gpu-nap: the GPU job under time slicing, its host polling an event with
  0.5 ms naps instead of spinning (the GPU's share without the spinning CPU);
- busy, busy-mps: beside a job that launches as a PyTorch model does
  (iterations of 100 bf16 products of 1024, then a synchronization), under
  time slicing and under MPS.

Prints per condition the median issue time per launch (µs) and its ratio to
alone, one JSON line per condition, and a table last.

    python3 lab/validate/host-beside.py [--seconds 4] [--rounds 3] [--launches 200]

Needs a GPU, PyTorch and, for gpu-mps, nvidia-cuda-mps-control.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

VICTIM = r"""
import sys, time, json, torch
launches, seconds = int(sys.argv[1]), float(sys.argv[2])
x = torch.zeros(1, device="cuda")
for _ in range(50):
    for _ in range(launches):
        x.add_(1)
    torch.cuda.synchronize()
per = []
end = time.perf_counter() + seconds
while time.perf_counter() < end:
    t0 = time.perf_counter_ns()
    for _ in range(launches):
        x.add_(1)
    t1 = time.perf_counter_ns()
    torch.cuda.synchronize()
    per.append((t1 - t0) / launches / 1e3)
print(json.dumps({"iterations": len(per), "us_per_launch": sorted(per)[len(per) // 2]}))
"""

SPIN = "while True:\n    pass\n"

GPU_NAP = r"""
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
done = torch.cuda.Event()
print("ready", flush=True)
while True:
    c = a @ b
    done.record()
    while not done.query():
        time.sleep(0.0005)
"""

GPU = r"""
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("ready", flush=True)
while True:
    c = a @ b
    torch.cuda.synchronize()
"""


BUSY = r"""
import torch
a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
b = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
print("ready", flush=True)
while True:
    for _ in range(100):
        c = a @ b
    torch.cuda.synchronize()
"""


# Per condition: the partner's program (None: alone), whether it waits on the
# GPU (it prints "ready" once its tensors are made), and whether it runs
# under MPS.
CONDITIONS = {
    "alone": (None, False, False),
    "cpu": (SPIN, False, False),
    "gpu": (GPU, True, False),
    "gpu-mps": (GPU, True, True),
    "gpu-nap": (GPU_NAP, True, False),
    "busy": (BUSY, True, False),
    "busy-mps": (BUSY, True, True),
}


def start(code, on_gpu, env):
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    if on_gpu:
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            raise RuntimeError("the GPU partner did not start")
    time.sleep(0.5)
    return p


def victim(env, launches, seconds):
    out = subprocess.run(
        [sys.executable, "-c", VICTIM, str(launches), str(seconds)],
        env=env, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["us_per_launch"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=4.0, help="timed seconds per victim run")
    ap.add_argument("--rounds", type=int, default=3, help="turns through the conditions")
    ap.add_argument("--launches", type=int, default=200, help="launches per iteration")
    ap.add_argument("--conditions", default=",".join(CONDITIONS), help=f"comma-separated, from {','.join(CONDITIONS)}")
    a = ap.parse_args()
    results = {k: [] for k in a.conditions.split(",")}
    if "alone" not in results:
        ap.error("--conditions must include alone")
    unknown = [k for k in results if k not in CONDITIONS]
    if unknown:
        ap.error(f"--conditions: unknown condition {', '.join(unknown)}")
    base = dict(os.environ)
    mps_dir = tempfile.mkdtemp(prefix="fikit-mps-")
    mps = dict(base, CUDA_MPS_PIPE_DIRECTORY=mps_dir, CUDA_MPS_LOG_DIRECTORY=mps_dir)
    for r in range(a.rounds):
        for cond in results:
            code, on_gpu, under_mps = CONDITIONS[cond]
            env = mps if under_mps else base
            if under_mps:
                subprocess.run(["nvidia-cuda-mps-control", "-d"], env=mps, check=True)
            partner = start(code, on_gpu, env) if code else None
            try:
                us = victim(env, a.launches, a.seconds)
            finally:
                if partner:
                    partner.kill()
                    partner.wait()
                if under_mps:
                    subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", env=mps, text=True)
                    time.sleep(1.0)
            results[cond].append(us)
            print(json.dumps({"round": r, "condition": cond, "us_per_launch": us}), flush=True)
    shutil.rmtree(mps_dir, ignore_errors=True)
    alone = statistics.median(results["alone"])
    print(f"{'condition':<10} {'µs/launch median [range]':<28} vs alone")
    for cond, v in results.items():
        m = statistics.median(v)
        print(f"{cond:<10} {m:6.2f} [{min(v):.2f}-{max(v):.2f}]{'':<11} {m / alone:.3f}x")


if __name__ == "__main__":
    main()
