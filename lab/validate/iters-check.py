#!/usr/bin/env python3
"""One short untraced run of each job of a validation set, alone, before
any of its rounds: how long an iteration takes, so that a set's guessed
iteration counts can be set once more (as its `about` allows) to give the
regions it aims at.

    python3 lab/validate/iters-check.py SET_JSON [ITERS]   (from the repository root, on a GPU machine)

Runs each job's command as the set gives it, with `--iters ITERS` (default
60) and `--warmup 5` in place of its own, plain Python, no fikit, one job
at a time; prints per job its ms an iteration (workload.py's median), the
region its set's count would take (a served job's: its requests over
their rate), and the count for a target region:
latency-critical jobs (priority 0) 2.5-5 s, partners 8-11 s (the sets'
aims), the middle of the band.
"""

import json
import subprocess
import sys

TARGET_S = {True: (2.5, 5.0), False: (8.0, 11.0)}


def with_args(command, iters):
    out, skip = [], False
    for i, a in enumerate(command):
        if skip:
            skip = False
            continue
        if a in ("--iters", "--warmup"):
            skip = True
            continue
        out.append(a)
    return out + ["--iters", str(iters), "--warmup", "5"]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    spec = json.load(open(sys.argv[1]))
    iters = int(sys.argv[2]) if len(sys.argv) == 3 else 60
    for name, job in spec["jobs"].items():
        command = job["command"]
        own = int(command[command.index("--iters") + 1]) if "--iters" in command else None
        run = subprocess.run(with_args(command, iters), capture_output=True, text=True)
        lines = [l for l in run.stdout.splitlines() if l.startswith("{")]
        if run.returncode != 0 or not lines:
            print(f"{name}: failed (exit {run.returncode}): {run.stderr.strip()[-300:]}", flush=True)
            continue
        ms = json.loads(lines[-1])["ms_per_iter_median"]
        lo, hi = TARGET_S[job["priority"] == 0]
        mid = (lo + hi) / 2
        if "--rate" in command:
            # A served job's region is its requests over their rate, whatever
            # a request takes (while the server keeps up).
            rate = float(command[command.index("--rate") + 1])
            region = f"{own / rate:.1f} s at its {own} requests" if own else "no count"
            aim = round(mid * rate)
        else:
            region = f"{own * ms / 1000:.1f} s at its {own}" if own else "no count"
            aim = round(mid * 1000 / ms)
        print(f"{name}: {ms:.2f} ms an iteration; {region}; {aim} for {mid:.2f} s", flush=True)


if __name__ == "__main__":
    main()
