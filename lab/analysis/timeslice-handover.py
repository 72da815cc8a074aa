#!/usr/bin/env python3
"""When time slicing hands the device over, from a batch-1 job's own trace
recorded beside a busy job (traces/h200-corun/*-timeslice-*): for each GPU
operation, its delay (start less the later of its launch call's start and
the previous operation's end) against how long the job's queue had been
empty when the call began (idle). A lost turn is a delay over 300 µs. If the other
context takes the device when this job's queue runs empty and keeps it for
a quantum, a lost turn's delay plus idle is that quantum (plus the switch).
With a `fikit-sim export --perfetto --policy timeslice` of the same job
beside the busy one, also sets the rate of gaps of 1 ms or more on the
job's own timeline (per 1,000 operations, while the busy job runs) beside
the real one.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars
    /tmp/hs/bin/python lab/analysis/timeslice-handover.py REAL.parquet [--sim EXPORT.json --job NAME]
"""
import argparse
import json
import statistics as st

import polars as pl

LOST_NS = 300_000
IDLE_EDGES_US = [0, 1, 5, 20, 100, 300, 1000, 2500, 1e12]


def operations(path):
    df = pl.read_parquet(path).filter(pl.col("kind").is_in(["kernel", "memcpy", "memset"])).sort("start_ns")
    return df.select(["start_ns", "end_ns", "launch_start_ns"]).rows()


def delays(ops):
    """(delay, idle) per operation after the first, ns."""
    out, prev_end = [], ops[0][1]
    for s, e, ls in ops[1:]:
        issued = ls if ls is not None else s
        out.append((s - max(issued, prev_end), max(0, issued - prev_end)))
        prev_end = max(prev_end, e)
    return out


def gap_rate(spans):
    gaps = [b[0] - a[1] for a, b in zip(spans, spans[1:])]
    big = sum(g >= 1_000_000 for g in gaps)
    return len(spans), big, 1000 * big / max(1, len(spans))


def sim_spans(path, job):
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    mine = {p for p, n in names.items() if job in n}
    others_end = max(
        (e["ts"] + e["dur"] for e in ev if e.get("ph") == "X" and e.get("cat") == "job" and e["pid"] not in mine),
        default=float("inf"),
    )
    spans = sorted(
        (int(e["ts"] * 1e3), int((e["ts"] + e["dur"]) * 1e3))
        for e in ev
        if e.get("ph") == "X" and e.get("cat") not in (None, "job") and e["pid"] in mine
    )
    return [s for s in spans if s[1] <= others_end * 1e3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("real", help="the job's trace recorded beside the busy job under time slicing")
    ap.add_argument("--sim", help="fikit-sim export --perfetto --policy timeslice of the job beside the busy one")
    ap.add_argument("--job", help="the job's name in the export (a part of it)")
    a = ap.parse_args()
    ops = operations(a.real)
    d = delays(ops)
    lost = [x for x in d if x[0] > LOST_NS]
    print(f"{a.real}: {len(ops)} operations, {len(lost)} lost turns (delay over {LOST_NS / 1e3:.0f} µs)")
    if lost:
        print(
            f"  a lost turn's delay: median {st.median(x[0] for x in lost) / 1e6:.2f} ms; "
            f"with the queue empty before it: {sum(x[1] > 0 for x in lost) / len(lost):.0%}"
        )
    print("  idle before (µs): operations, lost share, median delay + idle of the lost (ms)")
    for lo, hi in zip(IDLE_EDGES_US, IDLE_EDGES_US[1:]):
        sel = [x for x in d if lo * 1e3 <= x[1] < hi * 1e3]
        if not sel:
            continue
        ls = [x for x in sel if x[0] > LOST_NS]
        tail = f", {st.median((x[0] + x[1]) for x in ls) / 1e6:.2f}" if ls else ""
        print(f"    [{lo:g}, {hi:g}): {len(sel)}, {len(ls) / len(sel):.2f}{tail}")
    n, big, rate = gap_rate([(s, e) for s, e, _ in ops])
    print(f"  gaps of 1 ms or more on its timeline: {big} in {n} operations, {rate:.1f} per 1,000")
    if a.sim:
        n, big, rate = gap_rate(sim_spans(a.sim, a.job or ""))
        print(f"  simulated, while the other job runs: {big} in {n} operations, {rate:.1f} per 1,000")


if __name__ == "__main__":
    main()
