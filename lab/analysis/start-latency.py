#!/usr/bin/env python3
"""How long a batch-1 job's kernels wait to start once they could, and how
long they run, trace by trace: for comparing a job's runs alone with and
without the MPS daemon (lab/validate/mps-alone.sh).

    python3 lab/analysis/start-latency.py ITERS TRACE [TRACE ...]

Over each trace's timed region (its last ITERS + 2 device synchronizations,
as lab/analysis/host-corun.py finds it): a kernel is ready at the later of
its launch call's return and the end of the kernel before it on its
stream; its wait is its start minus that. Printed per trace: the region's
length, the kernels' summed duration, the median and 90th percentile of
the wait over kernels launched onto an idle stream (the previous kernel
had ended when the launch call returned: the GPU's own start latency) and
over the others (queued behind their stream's previous kernel), and the
share launched onto an idle stream. Needs pyarrow.
"""

import importlib.util
import os
import statistics
import sys

spec = importlib.util.spec_from_file_location(
    "host_corun", os.path.join(os.path.dirname(os.path.abspath(__file__)), "host-corun.py"))
host_corun = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_corun)


def pct(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    try:
        iters = int(sys.argv[1])
    except ValueError:
        sys.exit(f"start-latency: ITERS: not a whole number: {sys.argv[1]}")
    print(f"{'trace':48} {'region ms':>9} {'kernel ms':>9} {'idle-start wait us p50/p90':>27} "
          f"{'queued wait us p50/p90':>23} {'idle share':>10}")
    for path in sys.argv[2:]:
        t, k, bounds = host_corun.timed_region(path, iters, extra=("stream",))
        # Every kernel of the trace by stream, for each one's predecessor.
        kernels = sorted(
            (r["start_ns"], r["end_ns"], r["stream"], r["launch_end_ns"])
            for r in t if r["kind"] == "kernel")
        start, end = bounds[0], bounds[-1]
        prev_end = {}
        idle, queued = [], []
        for s, e, stream, le in kernels:
            p = prev_end.get(stream)
            prev_end[stream] = max(e, p or e)
            if le is None or p is None or not (start <= s <= end):
                continue
            if p <= le:
                idle.append((s - le) / 1e3)
            else:
                queued.append((s - p) / 1e3)
        kernel_ms = sum(r["end_ns"] - r["start_ns"] for r in k) / 1e6
        n = len(idle) + len(queued)
        print(f"{os.path.relpath(path)[-48:]:48} {(end - start) / 1e6:9.1f} {kernel_ms:9.1f} "
              f"{statistics.median(idle) if idle else float('nan'):13.2f} / {pct(idle, 0.9):8.2f}   "
              f"{statistics.median(queued) if queued else float('nan'):10.2f} / {pct(queued, 0.9):8.2f} "
              f"{len(idle) / n if n else float('nan'):10.2f}")


if __name__ == "__main__":
    main()
