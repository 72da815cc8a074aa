#!/usr/bin/env python3
"""Where a job's time goes, from its trace alone: its own GPU work (kernels,
copies, memsets), the time its operations waited to start once ready (ready:
launched and the previous operation done; the launch latency alone, the
room another job's kernels hold beside it), and the rest (the host). Run on
a job's trace alone and its trace beside a busy job (e.g.
traces/h200-corun/bert-base-mps-alone-735.parquet and -mps-895), it splits
the co-run's extra time into longer kernels and later starts. The first
fifth of the operations (model loading, warm-up) is left out.

A simulated run exported with `fikit-sim export --perfetto --policy P`
(a .json argument) is split the same way per job, from each kernel's
`waited_ns` (first block placed, or turn begun, after it became able to
run). A simulated op's ready time already holds the launch latency its trace
recorded alone, so its waits are only those the other jobs cause, while a
trace's waits include the launch latency (about 2 µs here): compare a
simulated run's waits with the trace beside the busy job less the trace
alone.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars
    /tmp/hs/bin/python lab/analysis/start-waits.py TRACE.parquet|EXPORT.json...
"""
import json
import sys

import polars as pl


def split(path):
    d = (
        pl.read_parquet(path)
        .filter(pl.col("kind").is_in(["kernel", "memset", "memcpy"]))
        .filter(pl.col("launch_start_ns").is_not_null())
        .sort("start_ns")
    )
    d = d.slice(d.height // 5, d.height - d.height // 5)
    if d.height == 0:
        raise ValueError(f"{path}: no GPU operations with launch times")
    busy = wait = 0
    prev = d["start_ns"][0]
    waits = []
    for s, e, launch in zip(d["start_ns"], d["end_ns"], d["launch_start_ns"]):
        w = max(0, s - max(launch, prev))
        waits.append(w)
        wait += w
        busy += e - s
        prev = max(prev, e)
    span = d["end_ns"][-1] - d["start_ns"][0]
    waits.sort()
    return d.height, span, busy, wait, waits[len(waits) // 2], waits[len(waits) * 9 // 10]


def split_export(path):
    """Per job of a simulated export: (name, ops, span, busy, waited, p50, p90)."""
    d = json.load(open(path))
    events = d["traceEvents"] if isinstance(d, dict) else d
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    jobs = {e["pid"]: e for e in events if e.get("cat") == "job"}
    kernels = {}
    for e in events:
        if e.get("cat") == "kernel":
            kernels.setdefault(e["pid"], []).append(e)
    out = []
    for pid, job in sorted(jobs.items()):
        ks = kernels.get(pid, [])
        first = {}
        for e in ks:
            op = e["args"]["op"]
            if op not in first or e["ts"] < first[op]["ts"]:
                first[op] = e
        ops = sorted(first)
        keep = set(ops[len(ops) // 5 :])
        if not keep:
            raise ValueError(f"{path}: job {names.get(pid, pid)} has no kernels")
        t0 = min(first[o]["ts"] for o in keep)
        span = (job["ts"] + job["dur"] - t0) * 1e3
        busy = sum(e["dur"] for e in ks if e["args"]["op"] in keep) * 1e3
        waits = sorted(first[o]["args"].get("waited_ns", 0) for o in keep)
        out.append((names.get(pid, str(pid)), len(keep), span, busy, sum(waits), waits[len(waits) // 2], waits[len(waits) * 9 // 10]))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for p in argv[1:]:
        try:
            if p.endswith(".json"):
                rows = [(f"{p}: {r[0]}",) + r[1:] for r in split_export(p)]
            else:
                rows = [(p,) + split(p)]
        except (OSError, ValueError, KeyError, json.JSONDecodeError, pl.exceptions.PolarsError) as e:
            print(f"{p}: {e}", file=sys.stderr)
            return 2
        for what, n, span, busy, wait, p50, p90 in rows:
            print(
                f"{what}: {n} operations over {span / 1e6:.0f} ms: own GPU work {busy / 1e6:.0f} ms "
                f"({busy / span:.0%}), waiting to start once ready {wait / 1e6:.0f} ms ({wait / span:.0%}), "
                f"host {(span - busy - wait) / 1e6:.0f} ms; wait per operation p50 {p50 / 1e3:.1f} µs, "
                f"p90 {p90 / 1e3:.1f} µs"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
