#!/usr/bin/env python3
"""A CUDA process that does nothing: it makes its context, launches one
kernel (so that fikit-run's start line-up sees its first launch), waits for
it, then sleeps SECONDS (default 20) and exits. The partner of
`idle-context.sh`.

    python3 lab/validate/idle_context.py [SECONDS]
"""
import sys
import time

import torch

x = torch.ones(1, device="cuda") + 1
torch.cuda.synchronize()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 20.0)
