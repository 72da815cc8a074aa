#!/usr/bin/env python3
"""Whether this machine's CPUs slow each other: a map for the "two host
speeds" of a launch-bound job (issue 15, the validation log of 2026-11-26).

A virtual machine may show one thread per core while two of its CPUs are
hyperthreads of one physical core on the host, and a CPU may be slower than
the others (a busier physical core). For each CPU it times a fixed Python
loop pinned there, alone (the CPU's own speed); then, for each SUBJECT CPU,
the same loop beside a spinner pinned to each other CPU in turn. A pair whose
loop slows well past the spread of the loop alone shares a core.

Prints one JSON line per measurement and a table last: each CPU's loop time
alone, and for each subject the other CPUs that slowed it by more than 10%.

    python3 lab/validate/cpu-map.py [--subjects 0,1,2,3] [--reps 7]

Linux only (taskset affinity through os.sched_setaffinity); no GPU needed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SPIN = "import os,sys; os.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass"


def loop_ms(n: int) -> float:
    t = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return (time.perf_counter() - t) * 1e3


def timed(cpu: int, reps: int, n: int) -> float:
    os.sched_setaffinity(0, {cpu})
    loop_ms(n // 4)
    return statistics.median(loop_ms(n) for _ in range(reps))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--subjects", default="0,1,2,3", help="comma-separated CPUs to time beside each other CPU")
    ap.add_argument("--reps", type=int, default=7, help="timings per measurement (median)")
    ap.add_argument("--loop", type=int, default=1_000_000, help="iterations of the timed loop")
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    subjects = [int(c) for c in a.subjects.split(",") if c != ""]
    if any(s not in cpus for s in subjects):
        ap.error(f"--subjects: each must be one of this process's CPUs {cpus}")
    alone = {}
    for c in cpus:
        alone[c] = timed(c, a.reps, a.loop)
        print(json.dumps({"cpu": c, "alone_ms": round(alone[c], 3)}), flush=True)
    beside = {}
    for s in subjects:
        for o in cpus:
            if o == s:
                continue
            sp = subprocess.Popen([sys.executable, "-c", SPIN, str(o)])
            time.sleep(0.05)
            t = timed(s, a.reps, a.loop)
            sp.kill()
            sp.wait()
            beside[(s, o)] = t
            print(json.dumps({"subject": s, "spinner": o, "ms": round(t, 3), "vs_alone": round(t / alone[s], 3)}), flush=True)
    lo, hi = min(alone.values()), max(alone.values())
    print(f"loop alone per CPU, ms: median {statistics.median(alone.values()):.2f}, range {lo:.2f}-{hi:.2f}")
    print("  " + " ".join(f"{c}:{alone[c]:.2f}" for c in cpus))
    for s in subjects:
        slow = [(o, beside[(s, o)] / alone[s]) for o in cpus if o != s and beside[(s, o)] / alone[s] > 1.10]
        ratios = [beside[(s, o)] / alone[s] for o in cpus if o != s]
        print(
            f"subject {s}: beside a spinner {statistics.median(ratios):.3f}x median, {max(ratios):.3f}x worst; "
            f"over 1.10x: {', '.join(f'{o} ({r:.2f}x)' for o, r in slow) or 'none'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
