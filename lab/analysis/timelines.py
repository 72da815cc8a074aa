#!/usr/bin/env python3
"""Reads live-replay timelines of two-job runs and reports how the GPU passed
between the jobs (`fikit-lab live` or `validate` with
FIKIT_LIVE_TIMELINE=DIR: each worker writes DIR/INDEX-JOB.csv, in the GPU's
global-timer ns; replay/src/worker.rs, write_timeline).

    python3 lab/analysis/timelines.py [--json OUT] RUN_DIR [RUN_DIR ...]

Per run: how often the device changed hands between the jobs and the
hand-over time, i.e. how long after it could have started (its kernel was
ready: submitted and its stream predecessor done, and the other job's kernel
had ended) the new job's first kernel started; runs of consecutive kernels
of one job; kernels switched out (time-slice preemption seen by the spin
kernel). Over all runs: the median hand-over, which is the GPU model's
`context_handover_ns` (simulator/README.md, "GPU model file").
"""
import argparse, bisect, csv, glob, json, os, statistics


def load(path):
    with open(path) as f:
        meta = dict(kv.split("=", 1) for kv in f.readline()[2:].split())
        rows = []
        for r in csv.DictReader(f):
            rows.append({k: (int(v) if v not in ("", None) and k != "kind" else v) for k, v in r.items()})
    return meta, rows


def live_kernels(d):
    """The kernels of each job in a live run's timeline folder (the isolated
    baselines left out), sorted by start: {job: [row, ...]}."""
    jobs = {}
    for p in glob.glob(os.path.join(d, "*.csv")):
        meta, rows = load(p)
        if meta.get("policy") == "Exclusive":
            continue
        jobs[meta["job"]] = sorted((r for r in rows if r["kind"] == "kernel" and r["start_ns"] != ""),
                                   key=lambda r: r["start_ns"])
    return jobs


def perfetto_kernels(path, job):
    """A simulated run exported for Perfetto (`fikit-sim export --perfetto
    --policy P`): JOB's kernel segments as sorted (start_ns, end_ns), the
    other jobs' segment starts, sorted, and all events."""
    ev = json.load(open(path))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    pid = next(p for p, n in names.items() if job in n)
    ks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    mine = sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)) for e in ks if e["pid"] == pid)
    other = sorted(round(e["ts"] * 1000) for e in ks if e["pid"] != pid)
    return mine, other, ev


def run(d):
    jobs = {}
    for p in sorted(glob.glob(os.path.join(d, "*.csv"))):
        meta, rows = load(p)
        if meta.get("policy") == "Exclusive":
            continue  # the isolated baselines a run also writes
        kernels = sorted((r for r in rows if r["kind"] == "kernel" and r["start_ns"] != ""),
                         key=lambda r: r["start_ns"])
        jobs[int(meta["index"])] = (meta, kernels)
    if len(jobs) != 2:
        return None
    ends = sorted((r["end_ns"], j) for j, (_, ks) in jobs.items() for r in ks)
    end_times = [e for e, _ in ends]
    handovers = []  # (ns, other job still running when ready)
    for j, (_, ks) in jobs.items():
        prev = {}
        for r in ks:
            ready = max(r["submitted_ns"], prev.get(r["stream"], 0))
            prev[r["stream"]] = r["end_ns"]
            i = bisect.bisect_left(end_times, r["start_ns"]) - 1
            if i < 0 or ends[i][1] == j:
                continue
            other_end = ends[i][0]
            handovers.append((r["start_ns"] - max(ready, other_end), other_end > ready))
    seq = sorted((r["start_ns"], r["end_ns"], j) for j, (_, ks) in jobs.items() for r in ks)
    runs = {j: 0 for j in jobs}
    last = None
    for _, _, j in seq:
        if j != last:
            runs[j] += 1
            last = j
    out = {"run": d, "policy": next(iter(jobs.values()))[0]["policy"]}
    for j, (meta, ks) in sorted(jobs.items()):
        sw = [r["switched_ns"] for r in ks if r["jumps"]]
        out[meta["job"]] = {"priority": int(meta["priority"]), "kernels": len(ks), "runs": runs[j],
                            "switched_out_kernels": len(sw), "switched_out_ms": round(sum(sw) / 1e6, 2)}
    h = [x for x, _ in handovers]
    busy = [x for x, b in handovers if b]
    out["handovers"] = len(h)
    out["handover_median_us"] = round(statistics.median(h) / 1e3, 1) if h else None
    out["handover_while_other_ran_median_us"] = round(statistics.median(busy) / 1e3, 1) if busy else None
    return out, h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--json", help="write the per-run figures and the overall hand-over here")
    a = ap.parse_args()
    per_run, allh = [], []
    for d in a.runs:
        r = run(d)
        if r is None:
            continue
        per_run.append(r[0])
        allh += r[1]
        print(json.dumps(r[0]))
    q = statistics.quantiles(allh, n=4) if len(allh) > 2 else []
    total = {"runs": len(per_run), "handovers": len(allh),
             "handover_median_ns": int(statistics.median(allh)) if allh else None,
             "handover_quartiles_ns": [int(x) for x in q]}
    print(json.dumps(total))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"total": total, "runs": per_run}, f, indent=1)


if __name__ == "__main__":
    main()
