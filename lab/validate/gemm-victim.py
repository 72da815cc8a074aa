#!/usr/bin/env python3
"""A victim shaped like the batch-1 jobs' own kernels, for the pressure pass
(issue 15): the four matrix products of one ViT-B/16 encoder layer at batch
1 (197 tokens: 768 to 2304, 768 to 768, 768 to 3072, 3072 to 768), float32
as the set's workloads run them, one step after another with a synchronize
between steps (as a latency-critical request returns), until SECONDS pass or
STOP_FILE appears. Run it under fikit-profile: its kernels are then in a trace
beside the partner's, and their stretch is read from the two
(lab/analysis/gemm-pressure.py).

    python3 lab/validate/gemm-victim.py [--seconds 300] [--stop-file PATH]
"""
import argparse
import os
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--stop-file")
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.randn(197, 768, device=dev)
    h = torch.randn(197, 3072, device=dev)
    w = [torch.randn(768, n, device=dev) for n in (2304, 768, 3072)] + [torch.randn(3072, 768, device=dev)]
    t_end = time.monotonic() + a.seconds
    steps = 0
    while time.monotonic() < t_end:
        if a.stop_file and steps % 50 == 0 and os.path.exists(a.stop_file):
            break
        x @ w[0]
        x @ w[1]
        x @ w[2]
        h @ w[3]
        torch.cuda.synchronize()
        steps += 1
    print(f'{{"steps": {steps}}}', flush=True)


if __name__ == "__main__":
    main()
