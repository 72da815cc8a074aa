#!/usr/bin/env python3
"""A neighbour for `idle-context.sh`: a CUDA process that makes its
context, launches one small kernel (so that fikit-run's start line-up sees
its first launch) and waits for it, then for SECONDS (default 20) does one
of:

- sleep: nothing at all;
- spin: keeps one CPU core busy in a Python loop, no CUDA call;
- held: launches GPU sleep kernels of about 50 ms back to back
  (`torch.cuda._sleep`), one at a time, so that under live FIKIT it
  waits at the gate through a launch-bound top job's region (no gap of
  that job fits 50 ms): a held partner with no model behind it.

    python3 lab/validate/idle_context.py [SECONDS] [sleep|spin|held]
"""
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
mode = sys.argv[2] if len(sys.argv) > 2 else "sleep"
if mode not in ("sleep", "spin", "held"):
    sys.exit(f"idle_context.py: mode {mode!r}: expected sleep, spin or held")
x = torch.ones(1, device="cuda") + 1
torch.cuda.synchronize()
end = time.monotonic() + seconds
if mode == "sleep":
    time.sleep(seconds)
elif mode == "spin":
    n = 0
    while time.monotonic() < end:
        n += 1
else:
    # About 50 ms at the H200's 1.98 GHz SM clock (clock64 cycles), longer
    # at a lower clock: any length over a few ms fits none of the top's
    # gaps. Not timed here: under FIKIT a timing launch would wait at the
    # gate, and its time with it.
    cycles = 100_000_000
    while time.monotonic() < end:
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()
