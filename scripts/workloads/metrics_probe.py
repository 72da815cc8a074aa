#!/usr/bin/env python3
"""Kernels of known DRAM traffic, to check fikit-profile's metrics pass
against arithmetic: each step runs

- copy: `dst.copy_(src)` of --mib MiB (float32): reads and writes --mib MiB;
- fill: `dst.fill_(1)`: writes --mib MiB, reads none;
- matmul: a --n x --n half-precision product (inputs 2n^2 bytes each, output
  2n^2): compute-bound, its SMs busy throughout, DRAM traffic near its operands';
- tiny: an add on one element: next to no traffic, one block (an issue rate that says little: it is per active cycle).

    python3 scripts/workloads/metrics_probe.py --mib 256 --n 8192

Prints one JSON line last: the sizes and each kernel's expected DRAM bytes.
"""

import argparse
import json

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=256, help="copy and fill size, MiB")
    p.add_argument("--n", type=int, default=8192, help="matrix size of the product")
    p.add_argument("--iters", type=int, default=3, help="steps")
    a = p.parse_args()
    nbytes = a.mib << 20
    src = torch.ones(nbytes // 4, device="cuda")
    dst = torch.empty_like(src)
    x = torch.randn(a.n, a.n, device="cuda", dtype=torch.half)
    y = torch.randn(a.n, a.n, device="cuda", dtype=torch.half)
    t = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    for _ in range(a.iters):
        dst.copy_(src)
        dst.fill_(1)
        z = x @ y
        t.add_(1)
        torch.cuda.synchronize()
    del z
    print(
        json.dumps(
            {
                "mib": a.mib,
                "n": a.n,
                "copy_read_bytes": nbytes,
                "copy_write_bytes": nbytes,
                "fill_write_bytes": nbytes,
                "matmul_operand_bytes": 2 * 2 * a.n * a.n,
                "matmul_output_bytes": 2 * a.n * a.n,
            }
        )
    )


if __name__ == "__main__":
    main()
