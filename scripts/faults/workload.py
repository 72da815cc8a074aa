#!/usr/bin/env python3
"""Small CUDA workload for the fault scripts (scripts/faults/): each step is a
256x256 matmul, a relu and a sum read back to the host (`.item()`: a blocking
copy), so the kernels per step are fixed and every step ends synchronized.

    python3 workload.py --iters 50            # 50 steps, then exit 0
    python3 workload.py --seconds 8           # steps for 8 s
    python3 workload.py --iters 40 --loader-workers 2   # inputs from a DataLoader (fork workers)

--pid-file: written (this process's pid) once CUDA is up and the first step
ran. --done-file: written last, with the JSON line printed on stdout
({"pid", "iters", "interrupted"}); DataLoader workers print
"worker PID" on stderr as they start. On SIGINT
(KeyboardInterrupt) the workload synchronizes, writes both and exits 3.
FAULTS_NO_CUDA=1 runs without torch (sleeps instead): for testing the
scripts' own logic on a machine without a GPU.
"""

import argparse
import json
import os
import sys
import time

NO_CUDA = os.environ.get("FAULTS_NO_CUDA") == "1"


def _announce():
    print(f"worker {os.getpid()}", file=sys.stderr, flush=True)


def _cpu_batch(i):
    return i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0.0)
    ap.add_argument("--loader-workers", type=int, default=0)
    ap.add_argument("--pid-file")
    ap.add_argument("--done-file")
    args = ap.parse_args()
    if not args.iters and not args.seconds:
        args.iters = 20

    if NO_CUDA:
        def step(_x=None):
            time.sleep(0.01)
    else:
        import torch

        dev = torch.device("cuda")
        a = torch.randn(256, 256, device=dev)
        b = torch.randn(256, 256, device=dev)

        def step(x=None):
            y = torch.relu((a if x is None else x) @ b)
            return y.sum().item()

    done = 0
    interrupted = False
    t0 = time.monotonic()
    try:
        step()
        done = 1
        if args.pid_file:
            with open(args.pid_file, "w") as f:
                f.write(f"{os.getpid()}\n")
        if args.loader_workers and NO_CUDA:
            import multiprocessing

            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(args.loader_workers, initializer=_announce) as pool:
                for _ in pool.imap(_cpu_batch, range(max(args.iters - 1, 1))):
                    step()
                    done += 1
        elif args.loader_workers:
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            # CPU tensors only in the workers; fork after CUDA is up in the parent.
            data = TensorDataset(torch.randn(max(args.iters - 1, 1) * 256, 256))
            loader = DataLoader(data, batch_size=256, num_workers=args.loader_workers,
                                multiprocessing_context="fork",
                                worker_init_fn=lambda _: _announce())
            for (x,) in loader:
                step(x if NO_CUDA else x.to("cuda"))
                done += 1
        else:
            while (args.iters and done < args.iters) or (
                args.seconds and time.monotonic() - t0 < args.seconds
            ):
                step()
                done += 1
    except KeyboardInterrupt:
        interrupted = True
        if not NO_CUDA:
            import torch

            torch.cuda.synchronize()
    result = {"pid": os.getpid(), "iters": done, "interrupted": interrupted}
    line = json.dumps(result)
    print(line, flush=True)
    if args.done_file:
        with open(args.done_file, "w") as f:
            f.write(line + "\n")
    sys.exit(3 if interrupted else 0)


if __name__ == "__main__":
    main()
