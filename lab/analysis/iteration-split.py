#!/usr/bin/env python3
"""A job's iterations split into kernels, waits and the rest: alone (its
trace), beside a busy job (its co-run trace) and simulated beside it (a
`fikit-sim export --perfetto --policy P` of the pair, with the alone trace
as the job's profile).

An iteration is the job's GPU operations launched between two host
synchronizations (the alone trace's, matched to the others by operation
order: the same program). Per iteration: its GPU span (first operation's
start to last one's end), the operations' own time, their waits once ready
(real: start minus the later of the launch and the previous operation's
end, so the launch latency is in it; simulated: the export's `waited_ns`,
the time other jobs cost after the recorded latency) and the rest of the
span (the GPU idle waiting for the host). Medians over the iterations the
three have in common, the first fifth and the last tenth left out.

    /tmp/hs/bin/python lab/analysis/iteration-split.py ALONE.parquet CORUN.parquet SIM.json JOB

JOB: a part of the job's name in the export.
"""
import json
import sys

import numpy as np
import polars as pl


def real(path):
    """Per GPU operation (in launch order): iteration, launch, start, end, wait."""
    d = pl.read_parquet(path)
    ops = d.filter(pl.col("kind").is_in(["kernel", "memcpy", "memset"])).sort("launch_start_ns")
    sync_end = d.filter(pl.col("kind") == "sync").sort("start_ns")["end_ns"].to_numpy()
    launch = ops["launch_start_ns"].to_numpy()
    start, end = ops["start_ns"].to_numpy(), ops["end_ns"].to_numpy()
    it = np.searchsorted(sync_end, launch)
    order = np.argsort(start, kind="stable")
    prev = np.empty(len(start), dtype=np.int64)
    done = np.maximum.accumulate(end[order])
    prev[order] = np.concatenate([[start[order][0]], done[:-1]])
    wait = np.maximum(0, start - np.maximum(launch, prev))
    return it, start, end, wait


def simulated(path, job, it_of_op):
    d = json.load(open(path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = [e for e in ev if e.get("ph") == "M" and e.get("name") == "process_name" and job in e["args"]["name"]]
    if not names:
        raise ValueError(f"{path}: no job named like {job}")
    pid = names[0]["pid"]
    ks = [e for e in ev if e.get("cat") == "kernel" and e["pid"] == pid]
    op = np.array([e["args"]["op"] for e in ks])
    if op.max() >= len(it_of_op):
        raise ValueError(f"{path}: operation {op.max()} beyond the alone trace's {len(it_of_op)}")
    start = np.array([e["ts"] * 1e3 for e in ks])
    end = np.array([(e["ts"] + e["dur"]) * 1e3 for e in ks])
    wait = np.array([e["args"]["waited_ns"] for e in ks], dtype=float)
    return it_of_op[op], start, end, wait


def split(it, start, end, wait, keys):
    rows = []
    for k in keys:
        m = it == k
        span = end[m].max() - start[m].min()
        own = (end[m] - start[m]).sum()
        rows.append((span, own, wait[m].sum(), span - own - wait[m].sum()))
    return np.median(np.array(rows), axis=0) / 1e3


def main(alone_path, corun_path, sim_path, job):
    a = real(alone_path)
    c = real(corun_path)
    if len(a[0]) != len(c[0]):
        raise ValueError(f"{alone_path} has {len(a[0])} GPU operations and {corun_path} {len(c[0])}: not the same program")
    s = simulated(sim_path, job, a[0])
    keys = sorted(set(a[0]) & set(c[0]) & set(s[0]))
    keys = keys[len(keys) // 5: len(keys) - len(keys) // 10]
    print(f"{len(keys)} iterations; medians per iteration, µs: GPU span = own time + waits + rest")
    for name, x in [("alone", a), ("beside (real)", c), ("beside (simulated)", s)]:
        span, own, wait, rest = split(*x, keys)
        print(f"  {name:<19} {span:8.0f} = {own:7.0f} + {wait:7.0f} + {rest:7.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    try:
        main(*sys.argv[1:])
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"iteration-split.py: {e}")
