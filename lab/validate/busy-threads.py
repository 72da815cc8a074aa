#!/usr/bin/env python3
"""Samples which CPU each busy thread of some processes runs on, for the
host-placement pass (lab/validate/host-placement.sh, issue 15).

Every INTERVAL seconds it reads /proc/PID/task/*/stat of each process
(field 39: the CPU the thread last ran on; utime + stime: its CPU time) and
counts, per process, the CPUs of the threads that were busy over the
interval (on a CPU for more than half of it). Runs until every process has
exited or until STOP_FILE exists, then prints one JSON line: per label, the
samples, and the busy threads' CPUs with their sample counts; and the pairs
(CPU of the first process's busy thread, CPU of another's) seen together.

    python3 lab/validate/busy-threads.py [--interval 0.1] [--stop-file F] LABEL=PID ...
"""
import argparse
import collections
import json
import os
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def threads(pid: int) -> dict:
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2 :].split()
        # After the command: state is field 3, utime 14, stime 15, processor 39.
        out[int(tid)] = (int(fields[11]) + int(fields[12]), int(fields[36]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    ap.add_argument("--stop-file", help="stop once this file exists")
    ap.add_argument("procs", nargs="+", help="LABEL=PID")
    a = ap.parse_args()
    procs = []
    for p in a.procs:
        label, _, pid = p.partition("=")
        if not pid.isdigit():
            ap.error(f"{p}: expected LABEL=PID")
        procs.append((label, int(pid)))
    last = {pid: threads(pid) for _, pid in procs}
    cpus = {label: collections.Counter() for label, _ in procs}
    samples = collections.Counter()
    pairs = collections.Counter()
    busy_need = a.interval * TICK / 2
    while True:
        time.sleep(a.interval)
        if a.stop_file and os.path.exists(a.stop_file):
            break
        alive = False
        busy = {}
        for label, pid in procs:
            now = threads(pid)
            if now:
                alive = True
                samples[label] += 1
            b = [cpu for tid, (t, cpu) in now.items() if tid in last[pid] and t - last[pid][tid][0] > busy_need]
            busy[label] = b
            cpus[label].update(b)
            last[pid] = now
        if not alive:
            break
        first = procs[0][0]
        for c in busy[first]:
            for label, _ in procs[1:]:
                for o in busy[label]:
                    pairs[f"{c}-{o}"] += 1
    print(json.dumps({
        "samples": dict(samples),
        "busy_cpus": {k: dict(sorted(v.items())) for k, v in cpus.items()},
        "pairs": dict(pairs.most_common()),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
