#!/usr/bin/env python3
"""Reads live-replay timelines (fikit-sim --live with FIKIT_LIVE_TIMELINE=DIR)
of two-job runs and reports how the GPU handed over between the jobs: for
each kernel of the high-priority job, the wait from when it could start (its
submission, or its stream predecessor's end) to its start, split by what the
other job was doing then; and how often and how long the other job's kernels
were switched out.

    python3 scripts/analysis/timelines.py RUN_DIR [RUN_DIR ...]

RUN_DIR holds one INDEX-JOB.csv per job of one run (the worker's format,
profiler/replay/src/worker.rs, write_timeline).
"""
import csv, glob, os, statistics, sys, bisect


def load(path):
    with open(path) as f:
        head = f.readline()
        meta = dict(kv.split("=", 1) for kv in head[2:].split())
        rows = []
        for r in csv.DictReader(f):
            for k in ("op", "stream", "duration_ns", "switched_ns", "jumps"):
                r[k] = int(r[k]) if r[k] else None
            for k in ("issued_ns", "submitted_ns", "start_ns", "end_ns"):
                r[k] = int(r[k]) if r[k] else None
            rows.append(r)
    return meta, rows


def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def run(d):
    jobs = []
    for p in sorted(glob.glob(os.path.join(d, "*.csv"))):
        meta, rows = load(p)
        if meta.get("policy") in ("Exclusive",):
            continue
        jobs.append((meta, rows))
    if len(jobs) != 2:
        return None
    jobs.sort(key=lambda j: int(j[0]["priority"]))
    (hm, hr), (lm, lr) = jobs
    lk = [r for r in lr if r["kind"] == "kernel" and r["start_ns"]]
    lk.sort(key=lambda r: r["start_ns"])
    lstarts = [r["start_ns"] for r in lk]
    out = {"hp": hm["job"], "lp": lm["job"], "policy": hm["policy"]}
    waits = {"lp_running": [], "lp_idle": []}
    ends_boundary = 0
    switched = 0
    prev_end = {}
    extra = []
    for r in hr:
        if r["kind"] != "kernel" or not r["start_ns"]:
            continue
        ready = max(r["submitted_ns"] or r["issued_ns"], prev_end.get(r["stream"], 0))
        prev_end[r["stream"]] = r["end_ns"]
        wait = r["start_ns"] - ready
        # the LP kernel running at `ready`, if any
        i = bisect.bisect_right(lstarts, ready) - 1
        running = None
        while i >= 0 and i >= len(lk) - 10**9:
            k = lk[i]
            if k["end_ns"] > ready:
                running = k
                break
            if ready - k["start_ns"] > 50_000_000:
                break
            i -= 1
        if running is None:
            waits["lp_idle"].append(wait)
        else:
            waits["lp_running"].append(wait)
            if running["end_ns"] <= r["start_ns"] + 2000:
                ends_boundary += 1
            if running["jumps"]:
                switched += 1
        extra.append(r["end_ns"] - r["start_ns"] - r["duration_ns"])
    out["hp_kernels"] = sum(len(v) for v in waits.values())
    for k, v in waits.items():
        out[k] = (len(v), round(pct(v, 0.5) / 1e3, 1), round(pct(v, 0.9) / 1e3, 1), round(sum(v) / 1e6, 2))
    out["hp_wait_ended_at_lp_kernel_end"] = ends_boundary
    lsw = [r["switched_ns"] for r in lk if r["jumps"]]
    out["lp_kernels"] = len(lk)
    out["lp_switched"] = (len(lsw), round(pct(lsw, 0.5) / 1e3, 1), round(sum(lsw) / 1e6, 2))
    hsw = [r["switched_ns"] for r in hr if r["kind"] == "kernel" and r["jumps"]]
    out["hp_switched"] = (len(hsw), round(sum(hsw) / 1e6, 2))
    return out


if __name__ == "__main__":
    print("waits: (count, median µs, p90 µs, total ms); lp_switched: (kernels, median µs, total ms)")
    for d in sys.argv[1:]:
        o = run(d)
        if o:
            print(d.rstrip("/").split("/")[-2], d.rstrip("/").split("/")[-1], o)
