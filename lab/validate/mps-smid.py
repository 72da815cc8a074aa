#!/usr/bin/env python3
"""Do two MPS clients' thread blocks share an SM? (issue 45, lab log
2026-11-30; design and rule fixed before it ran.)

Run twice at once under one MPS daemon, `A` first:
  A: a kernel of 120 blocks x 128 threads, each block spinning 2 ms, launched
     back to back for SECONDS (one block to an SM on 132 SMs leaves 12 SMs
     free of A);
  B: after 0.5 s, a kernel of 528 blocks x 512 threads, each block spinning
     2 us, launched and synchronized one at a time for SECONDS + 1 (so that
     its last second or so runs alone).
Every block records its SM (%smid) and its start and end (%globaltimer);
A keeps every kernel's records, B about one kernel's in 20 (all of them
make a file of hundreds of MB). Each writes OUT/smid-ROLE.npz; `read` prints, for B's blocks that ran while
an A block was resident: the share on SMs that held an A block then, and B's
kernel times beside A against B's kernels alone (before A starts or after
it ends, when B runs alone).
Rule: exclusive if under 5% of those B blocks ran on an SM holding an A
block; shared if over 50%; between: mixed. (Ran 2026-11-30: shared, B's
kernel 4.5 us beside A, 2.2 alone; reports/validation/mps-smid-2026-11-30.)

A_KERNEL=busy (environment) makes A's blocks issue: each thread keeps
A_REGS (default 112) float accumulators live in FMAs while it spins, and
each block takes A_SMEM bytes of dynamic shared memory (default 13056, at
least 4 a thread), as the cuDNN kernels of the partners' tails do (128
registers, 13 KB; lab log 2026-11-30). A prints its registers a thread. Stated before it runs: B's
median beside a busy A at least 3x its median beside the spinning A (4.5
us): blocks that issue slow another client's blocks on their SMs, and a
batch-1 kernel's stretch in a partner's tail is that; under 1.5x: it is
not, and the tails' stretch comes from elsewhere; between: partly.

    python3 lab/validate/mps-smid.py A|B SECONDS OUT
    python3 lab/validate/mps-smid.py read OUT
"""
import sys
import time

import numpy as np

SRC = r"""
extern "C" __global__ void spin(unsigned long long ns, unsigned int *sm,
                                unsigned long long *t0, unsigned long long *t1) {
  unsigned long long s, e;
  unsigned int id;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(s));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(e)); } while (e - s < ns);
  __syncthreads();
  if (threadIdx.x == 0) { sm[blockIdx.x] = id; t0[blockIdx.x] = s; t1[blockIdx.x] = e; }
}

extern "C" __global__ void busy(unsigned long long ns, unsigned int *sm,
                                unsigned long long *t0, unsigned long long *t1, float *sink) {
  extern __shared__ float buf[];
  float a[REGS];
#pragma unroll
  for (int i = 0; i < REGS; i++) a[i] = threadIdx.x * 0.001f + i;
  unsigned long long s, e;
  unsigned int id;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(s));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  do {
#pragma unroll
    for (int i = 0; i < REGS; i++) a[i] = fmaf(a[i], 0.9999f, 0.0001f);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(e));
  } while (e - s < ns);
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < REGS; i++) acc += a[i];
  buf[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = id; t0[blockIdx.x] = s; t1[blockIdx.x] = e;
    sink[blockIdx.x] = buf[blockDim.x - 1];
  }
}
"""


def run(role, seconds, out):
    import os

    import cupy as cp
    grid, block, ns = (120, 128, 2_000_000) if role == "A" else (528, 512, 2_000)
    busy = role == "A" and os.environ.get("A_KERNEL") == "busy"
    smem = max(int(os.environ.get("A_SMEM", "13056")), 4 * block) if busy else 0
    if busy:
        k = cp.RawKernel(SRC.replace("REGS", os.environ.get("A_REGS", "112")), "busy")
        sink = cp.zeros(grid, cp.float32)
        print(f"A: busy blocks, {k.attributes['num_regs']} registers a thread, {smem} bytes of shared memory")
    else:
        k = cp.RawKernel(SRC.replace("REGS", "1"), "spin")
    if role == "B":
        time.sleep(0.5)
        seconds += 1.0
    sm = cp.zeros(grid, cp.uint32)
    t0 = cp.zeros(grid, cp.uint64)
    t1 = cp.zeros(grid, cp.uint64)
    rows = []
    end = time.time() + seconds
    while time.time() < end:
        if busy:
            k((grid,), (block,), (cp.uint64(ns), sm, t0, t1, sink), shared_mem=smem)
        else:
            k((grid,), (block,), (cp.uint64(ns), sm, t0, t1))
        cp.cuda.Device().synchronize()
        if role == "A" or len(rows) < 1 or (time.time() * 1000) % 20 < 1:
            rows.append(np.stack([sm.get().astype(np.uint64), t0.get(), t1.get()], 1))
    np.savez(f"{out}/smid-{role}.npz", blocks=np.concatenate(rows), kernels=len(rows), grid=grid)
    print(f"{role}: {len(rows)} kernels")


def read(out):
    a = np.load(f"{out}/smid-A.npz")["blocks"].astype(np.int64).reshape(-1, 120, 3)
    b = np.load(f"{out}/smid-B.npz")
    grid = int(b["grid"])
    k = b["blocks"].astype(np.int64).reshape(-1, grid, 3)
    a_start, a_end = a[:, :, 1].min(1), a[:, :, 2].max(1)
    held = np.zeros((len(a), 1024), bool)
    for i, kern in enumerate(a):
        held[i, kern[:, 0]] = True
    sm, s = k[:, :, 0].ravel(), k[:, :, 1].ravel()
    i = np.clip(np.searchsorted(a_start, s, side="right") - 1, 0, len(a) - 1)
    beside = (s >= a_start[i]) & (s <= a_end[i])
    shared = held[i, sm] & beside
    dur = (k[:, :, 2].max(1) - k[:, :, 1].min(1)) / 1e3
    kb = beside.reshape(-1, grid).all(1)
    alone = (k[:, :, 1].min(1) > a_end.max()) | (k[:, :, 2].max(1) < a_start.min())
    print(f"A: {len(a)} kernels, {len(np.unique(a[:, :, 0]))} SMs; B: {len(k)} kernels kept, {beside.sum()} blocks began while A's kernel ran")
    if beside.any():
        print(f"B blocks on an SM holding an A block then: {shared.sum() / beside.sum():.1%}")
    print(f"B kernel, us: beside A median {np.median(dur[kb]) if kb.any() else float('nan'):.1f} ({kb.sum()}), alone median {np.median(dur[alone]) if alone.any() else float('nan'):.1f} ({alone.sum()})")
    if kb.any():
        print(f"B's SMs beside A: {len(np.unique(k[kb][:, :, 0]))}; per kernel median {np.median([len(np.unique(x[:, 0])) for x in k[kb]]):.0f}")


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        run(sys.argv[1], float(sys.argv[2]), sys.argv[3])
