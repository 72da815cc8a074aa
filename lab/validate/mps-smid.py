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

Amended 2026-11-30, before the busy run: B's blocks spin on the clock, so
they end 2 us after they start however their warps are issued; beside a
busy A only where they are placed can show. B_KERNEL=work gives B a fixed
amount of work instead (B_ITERS FMA steps a thread, set by a calibration
launch alone to about 2 us a kernel, printed; B_ITERS sets it instead), and
the rule above is read with B working beside the busy A against B working
beside the spinning A. (The first such run, 02:41Z, calibrated B while A
already ran, 28 steps beside the spinning A and 10 beside the busy one:
not alike, so the second sets B_ITERS.)

The partner's tail, alone and beside B (same call, stated before it runs):
A_KERNEL=work gives A the tails' cuDNN shape and a fixed amount of work, A
reading global memory as it goes (A_GRID blocks of A_THREADS, default 1188 x
128 with 112 accumulators and 13,056 bytes of shared memory: four to an SM,
2.25 waves on 132 SMs; A_ITERS set by a calibration launch of one wave to a
block time of about A_BLOCK_US, default 180 us). `read` then prints, for A's
kernels alone (B's first half second), the share of the kernel's time at
which its last block started and the share of its places still held at
tenths of its time; and for B's kernels that start inside an A kernel, their
stretch over B alone by where they start (tenths of the A kernel). These are
the hardware's, not any pair's: a calibration of how a multi-wave kernel's
room opens. Rule: if A's last block starts at least 0.05 later than the
simulator's synchronized waves put it ((W - 1) / W of its time, 0.67 for
2.25 waves placed as 3), the model's tail opens as the measured ramp (the
places held at tenths, and the blocks' spread of times that makes it);
else the tail stands.

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

extern "C" __global__ void work(int iters, unsigned int *sm,
                                unsigned long long *t0, unsigned long long *t1, float *sink,
                                const float *g, unsigned int mask) {
  extern __shared__ float buf[];
  float a[REGS];
#pragma unroll
  for (int i = 0; i < REGS; i++) a[i] = threadIdx.x * 0.001f + i;
  unsigned long long s, e;
  unsigned int id;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(s));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  unsigned int at = blockIdx.x * blockDim.x + threadIdx.x;
  for (int it = 0; it < iters; it++) {
    float x = g ? g[(at + it * 40961u) & mask] : 0.9999f;
#pragma unroll
    for (int i = 0; i < REGS; i++) a[i] = fmaf(a[i], x, 0.0001f);
  }
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < REGS; i++) acc += a[i];
  buf[threadIdx.x] = acc;
  __syncthreads();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(e));
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = id; t0[blockIdx.x] = s; t1[blockIdx.x] = e;
    sink[blockIdx.x] = acc;
  }
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


def shape(role):
    """(kind, grid, threads, accumulators, shared bytes) of ROLE's kernel."""
    import os

    if role == "A":
        kind = os.environ.get("A_KERNEL", "spin")
        grid = int(os.environ.get("A_GRID", "1188" if kind == "work" else "120"))
        block = int(os.environ.get("A_THREADS", "128"))
        regs = int(os.environ.get("A_REGS", "112")) if kind != "spin" else 1
        smem = max(int(os.environ.get("A_SMEM", "13056")), 4 * block) if kind != "spin" else 0
    else:
        kind = os.environ.get("B_KERNEL", "spin")
        grid, block, regs = 528, 512, 4
        smem = 4 * block if kind == "work" else 0
    return kind, grid, block, regs, smem


def run(role, seconds, out):
    import os

    import cupy as cp
    kind, grid, block, regs, smem = shape(role)
    ns = 2_000_000 if role == "A" else 2_000
    k = cp.RawKernel(SRC.replace("REGS", str(regs)), kind)
    sm = cp.zeros(grid, cp.uint32)
    t0 = cp.zeros(grid, cp.uint64)
    t1 = cp.zeros(grid, cp.uint64)
    sink = cp.zeros(grid, cp.float32)
    g = cp.ones(1 << 24, cp.float32) * 0.9999 if role == "A" else None

    def launch(n, blocks=grid):
        if kind == "spin":
            k((blocks,), (block,), (cp.uint64(ns), sm, t0, t1))
        elif kind == "busy":
            k((blocks,), (block,), (cp.uint64(ns), sm, t0, t1, sink), shared_mem=smem)
        else:
            gp = g if g is not None else np.uint64(0)
            k((blocks,), (block,), (cp.int32(n), sm, t0, t1, sink, gp, cp.uint32((1 << 24) - 1)),
              shared_mem=smem)
        cp.cuda.Device().synchronize()

    iters = int(os.environ.get(f"{role}_ITERS", "0"))
    if kind == "work" and iters == 0:
        # Calibration alone: A, one wave's block time; B, its kernel's span.
        target = float(os.environ.get("A_BLOCK_US", "180")) if role == "A" else 2.0
        wave = min(grid, 4 * 132) if role == "A" else grid
        iters = 64
        for _ in range(4):
            for _ in range(3):
                launch(iters, wave)
            b0, b1 = t0.get()[:wave].astype(np.int64), t1.get()[:wave].astype(np.int64)
            took = (np.median(b1 - b0) if role == "A" else b1.max() - b0.min()) / 1e3
            iters = max(1, int(iters * target / max(took, 1e-3)))
        print(f"{role}: work, {iters} steps a thread ({took:.1f} us at the last try)")
    print(f"{role}: {kind} kernel {grid} x {block}, {k.attributes['num_regs']} registers a thread, {smem} bytes of shared memory")
    if role == "B":
        time.sleep(0.5)
        seconds += 1.0
    rows = []
    end = time.time() + seconds
    while time.time() < end:
        launch(iters)
        if role == "A" or len(rows) < 1 or (time.time() * 1000) % 20 < 1:
            rows.append(np.stack([sm.get().astype(np.uint64), t0.get(), t1.get()], 1))
    np.savez(f"{out}/smid-{role}.npz", blocks=np.concatenate(rows), kernels=len(rows), grid=grid)
    print(f"{role}: {len(rows)} kernels")


def drain(a):
    """A's kernels alone: where their last block starts, places held."""
    start, end = a[:, :, 1].min(1), a[:, :, 2].max(1)
    dur = (end - start).astype(float)
    last = (a[:, :, 1].max(1) - start) / dur
    width = max(1, int(np.median([(k[:, 1] <= k[:, 1].min() + 1000).sum() for k in a[:20]])))
    held = []
    for f in np.arange(0.0, 1.0, 0.1):
        t = start + f * dur
        held.append(np.median(((a[:, :, 1] <= t[:, None]) & (a[:, :, 2] > t[:, None])).sum(1)) / width)
    bd = a[:, :, 2] - a[:, :, 1]
    bt = np.median(bd) / np.median(dur)
    print(f"A alone: block times p10 / p50 / p90 {np.percentile(bd, 10) / 1e3:.1f} / {np.median(bd) / 1e3:.1f} / {np.percentile(bd, 90) / 1e3:.1f} us")
    print(f"A alone: {len(a)} kernels, {np.median(dur) / 1e3:.1f} us, a block {bt:.2f} of it, first wave {width} blocks")
    print(f"A alone: last block starts at {np.median(last):.3f} [{np.percentile(last, 10):.3f}-{np.percentile(last, 90):.3f}] of the kernel")
    print("A alone: places held at tenths: " + " ".join(f"{h:.2f}" for h in held))


def by_tenths(a_start, a_end, b_start, b_dur, ref):
    """B's kernels that start inside an A kernel (A's kernels sorted by
    start): which of them (a mask), and the line of their median stretch
    over `ref` (B alone) by where they start, in tenths of that A kernel.
    `synth-tail.py` prints the simulator's with it."""
    j = np.clip(np.searchsorted(a_start, b_start, side="right") - 1, 0, len(a_start) - 1)
    inside = (b_start >= a_start[j]) & (b_start < a_end[j])
    pos = (b_start - a_start[j]) / (a_end[j] - a_start[j])
    cells = []
    for t in range(10):
        m = inside & (pos >= t / 10) & (pos < (t + 1) / 10)
        cells.append(f"{np.median(b_dur[m]) / ref:.1f}x({m.sum()})" if m.any() else "-")
    return inside, "B's stretch by where it starts in A's kernel (tenths): " + " ".join(cells)


def read(out):
    a0 = np.load(f"{out}/smid-A.npz")
    a = a0["blocks"].astype(np.int64).reshape(-1, int(a0["grid"]), 3)
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
    solo = a_end < k[:, :, 1].min()
    if len(a[0]) > 4 * 132 and solo.sum() > 10:
        drain(a[solo])
        ref = np.median(dur[alone]) if alone.any() else float("nan")
        print(by_tenths(a_start, a_end, k[:, :, 1].min(1), dur, ref)[1])


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        run(sys.argv[1], float(sys.argv[2]), sys.argv[3])
