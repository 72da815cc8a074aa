#!/usr/bin/env python3
"""How live FIKIT fills a server's gaps, from one traced round (`fikit-run
... --policy fikit --trace DIR`): the server's trace and its partner's, on
one CUPTI clock.

    python3 lab/analysis/fill-timing.py SERVER.parquet PARTNER.parquet [--split-us US]

The server is busy from each kernel's launch call to its end (as fikit-run's
idle filled counts it); the idle spans between its busy spans that last at
most --split-us (default 2000) are its gaps inside a request (longer ones
are between requests, where the partner runs as the top job, not as a
fill). A partner kernel released inside such a gap is a fill: its launch
call began in it (its start, where the call was not recorded), since its
kernel may reach the GPU after the server's next launch. Printed:
- how many gaps, how many held a fill, fills per filled gap;
- reaction: a gap's first fill start less the gap's start (the server's
  kernel end the gate had to see), p10 / p50 / p90, µs; split at the fill's
  launch call as CUPTI recorded it (with the preloaded shim, the default
  launch hook, the gate waits before the runtime's call begins, so the
  call's start is the gate's release): release (call start less the gap's
  start: the gate seeing the gap) and launch (kernel start less the call's
  start: the driver and the GPU);
- spacing: a later fill's start less the end of the fill before it;
- the server's next kernel after a filled gap: its start less the later of
  its launch call's return and the last fill's end, against the same after
  an unfilled gap (its start less the later of its launch call's return
  and the gap's start): the difference of the medians is what passing the
  GPU to the partner's context and back costs the server;
- the gaps' lengths, filled and not.
Last, the three as a model file's `fikit_gate` (simulator/README.md): the
medians of release, of launch less the switch, and of the switch back. Needs
pyarrow.
"""

import argparse
from bisect import bisect_left
import statistics
import sys

import pyarrow.parquet as pq

COLUMNS = ["kind", "start_ns", "end_ns", "launch_start_ns", "launch_end_ns"]


def kernels(path):
    """(start, end, launch start, launch end) of the trace's kernels, by start."""
    try:
        t = pq.read_table(path, columns=COLUMNS)
    except Exception as e:  # a missing file or column: say which
        sys.exit(f"fill-timing: {path}: {e}")
    cols = {c: t.column(c).to_pylist() for c in COLUMNS}
    out = sorted(
        (cols["start_ns"][i], cols["end_ns"][i], cols["launch_start_ns"][i], cols["launch_end_ns"][i])
        for i, k in enumerate(cols["kind"]) if k == "kernel")
    if not out:
        sys.exit(f"fill-timing: {path}: no kernel rows")
    return out


def busy_from(k):
    """When a server kernel `(start, end, launch start, launch end)` makes
    it busy: its launch call's start (or its start, where the call was not
    recorded), whichever is earlier."""
    return min(k[0], k[2]) if k[2] is not None else k[0]


def busy_spans(ks):
    """The server's busy spans, merged: each kernel from `busy_from` to its
    end."""
    spans = sorted((busy_from(k), k[1]) for k in ks)
    out = []
    for s, e in spans:
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def released(k):
    """When a kernel `(start, end, launch start, launch end)` was let go:
    its launch call's start, else its start."""
    return k[2] if k[2] is not None else k[0]


def pct(v, q):
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def us3(v):
    return " / ".join(f"{pct(v, q) / 1e3:7.1f}" for q in (0.1, 0.5, 0.9)) + f"  ({len(v)})"


def analyse(server, partner, split_ns):
    """The figures of the module's docstring, as a dict of lists and counts."""
    spans = busy_spans(server)
    # The server kernel that opens each busy span: its launch return and start.
    first = {}
    for k in server:
        s, le = k[0], k[3]
        first.setdefault(busy_from(k), (s, le if le is not None else s))
    opens = sorted(first.items())
    keys = [key for key, _v in opens]
    out = {"gaps": 0, "filled": 0, "fills": 0, "reaction": [], "release": [], "launch": [],
           "spacing": [],
           "after_fill": [], "after_idle": [], "len_filled": [], "len_idle": []}
    # The partner's kernels by release: the launch call's start, else the start.
    partner = sorted(partner, key=released)
    j = 0
    for prev, nxt in zip(spans, spans[1:]):
        gap_start, gap_end = prev[1], nxt[0]
        if gap_end - gap_start > split_ns:
            continue
        out["gaps"] += 1
        while j < len(partner) and released(partner[j]) < gap_start:
            j += 1
        fills = []
        while j < len(partner) and released(partner[j]) < gap_end:
            fills.append(partner[j])
            j += 1
        # The server's kernel that ends the gap (it opens the next busy span).
        i = bisect_left(keys, gap_end)
        k = opens[i][1] if i < len(opens) else None
        if fills:
            out["filled"] += 1
            out["fills"] += len(fills)
            out["reaction"].append(fills[0][0] - gap_start)
            if fills[0][2] is not None:
                out["release"].append(fills[0][2] - gap_start)
                out["launch"].append(fills[0][0] - fills[0][2])
            out["spacing"].extend(n[0] - p[1] for p, n in zip(fills, fills[1:]))
            out["len_filled"].append(gap_end - gap_start)
            if k is not None:
                out["after_fill"].append(k[0] - max(k[1], max(f[1] for f in fills)))
        else:
            out["len_idle"].append(gap_end - gap_start)
            if k is not None:
                out["after_idle"].append(k[0] - max(k[1], gap_start))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("server")
    p.add_argument("partner")
    p.add_argument("--split-us", type=float, default=2000.0)
    a = p.parse_args()
    r = analyse(kernels(a.server), kernels(a.partner), int(a.split_us * 1e3))
    print(f"gaps inside requests (at most {a.split_us:.0f} µs): {r['gaps']}, "
          f"filled {r['filled']}, fills {r['fills']}"
          + (f" ({r['fills'] / r['filled']:.2f} a filled gap)" if r["filled"] else ""))
    print("                                     p10 /     p50 /     p90 µs  (count)")
    print(f"reaction (first fill after the gap)  {us3(r['reaction'])}")
    print(f"  release (its launch call's start)  {us3(r['release'])}")
    print(f"  launch (call start to kernel)      {us3(r['launch'])}")
    print(f"spacing (fill after fill)           {us3(r['spacing'])}")
    print(f"server's next kernel after a fill   {us3(r['after_fill'])}")
    print(f"server's next kernel, gap unfilled  {us3(r['after_idle'])}")
    print(f"gap length, filled                  {us3(r['len_filled'])}")
    print(f"gap length, unfilled                {us3(r['len_idle'])}")
    if r["after_fill"] and r["after_idle"]:
        d = statistics.median(r["after_fill"]) - statistics.median(r["after_idle"])
        print(f"passing the GPU back to the server costs it about {d / 1e3:.1f} µs (difference of the medians)")
        if r["release"]:
            # A model file's fikit_gate (simulator/README.md): the launch
            # path as measured holds the switch to the partner, counted
            # once, in switch_ns.
            release = statistics.median(r["release"])
            switch = max(0.0, d)
            launch = max(0.0, statistics.median(r["launch"]) - switch)
            print(f'as a model file\'s fikit_gate: {{"release_ns": {release:.0f}, '
                  f'"launch_ns": {launch:.0f}, "switch_ns": {switch:.0f}}}')


if __name__ == "__main__":
    main()
