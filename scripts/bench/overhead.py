#!/usr/bin/env python3
"""Profiler overhead on a GPU: resnet50 batch-1 inference (launch-bound) and
batch-64 inference (GPU-bound), with no tracer, under fikit-profile and under
torch.profiler (CUDA activity), alternating the tracers round by round (each round starting one tracer
later) and
reporting the median ms/iteration over the rounds.

    python3 scripts/bench/overhead.py --fikit-profile target/release/fikit-profile --rounds 5

Extra fikit variants at batch 1 (collector settings through the environment):
`fikit-bare` records only kernels, copies and memsets (no API calls, no
synchronizations): the bare CUPTI collector the issue compares against;
`fikit-callback` records the launch/copy/sync calls through CUPTI callbacks
(the default before 2026-11-22, and how the shipped traces were made);
`fikit-activity` is the default (API activity records) spelled out;
`fikit-runtime` / `fikit-driver` record the same calls of only the runtime /
only the driver API;
`fikit-latency` records no API calls but the kernels' queued/submitted
timestamps and CUPTI synchronization records; `fikit-period` lets CUPTI's worker deliver
buffers (cuptiActivityFlushPeriod) instead of calling cuptiActivityFlushAll.

Prints a Markdown table last; --json writes every run.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOAD = os.path.join(HERE, "..", "workloads", "workload.py")


def run_once(tracer, batch, iters, warmup, fikit, tmp):
    args = [sys.executable, WORKLOAD, "--model", "resnet50", "--batch", str(batch),
            "--mode", "eval", "--iters", str(iters), "--warmup", str(warmup)]
    env = dict(os.environ)
    if tracer == "torch.profiler":
        args.append("--torch-profiler")
    elif tracer.startswith("fikit"):
        if tracer == "fikit-bare":
            env["FIKIT_API"] = "none"
            env["FIKIT_SYNC_ACTIVITY"] = "0"
        elif tracer == "fikit-period":
            env["FIKIT_FLUSH_MODE"] = "period"
        elif tracer == "fikit-activity":
            env["FIKIT_API"] = "activity"
            env["FIKIT_SYNC_ACTIVITY"] = "0"
        elif tracer == "fikit-latency":
            # No API records: the kernels' queued/submitted timestamps, and
            # the synchronizations as CUPTI synchronization records.
            env["FIKIT_API"] = "latency"
            env["FIKIT_SYNC_ACTIVITY"] = "1"
        elif tracer == "fikit-runtime":
            env["FIKIT_API"] = "runtime"
        elif tracer == "fikit-driver":
            env["FIKIT_API"] = "driver"
        elif tracer == "fikit-callback":
            env["FIKIT_API"] = "callback"
        out = tempfile.mkdtemp(dir=tmp)
        args = [fikit, "-q", "-o", out, "--name", f"ovh-bs{batch}", "--"] + args
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"{tracer} bs{batch} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    last = json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])
    return last["ms_per_iter"], last.get("ms_per_iter_median")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fikit-profile", required=True, help="path of the fikit-profile binary")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each tracer (>= 3)")
    ap.add_argument("--json", help="write every run here")
    ap.add_argument("--batches", default="1,64", help="which of the two workloads to run")
    ap.add_argument("--variants", default="fikit-bare,fikit-callback,fikit-period",
                    help="extra fikit variants at batch 1, comma-separated ('' for none)")
    ap.add_argument("--iters-bs1", type=int, default=500, help="timed iterations at batch 1")
    ap.add_argument("--no-torch", action="store_true",
                    help="leave torch.profiler out (experiments between fikit variants)")
    a = ap.parse_args()
    plans = [
        (1, a.iters_bs1, 100, ["none", "fikit-profile"] + [v for v in a.variants.split(",") if v]
         + ([] if a.no_torch else ["torch.profiler"])),
        (64, 100, 20, ["none", "fikit-profile"] + ([] if a.no_torch else ["torch.profiler"])),
    ]
    wanted = {int(b) for b in a.batches.split(",")}
    plans = [p for p in plans if p[0] in wanted]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for batch, iters, warmup, tracers in plans:
            for r in range(a.rounds):
                # Each round starts one tracer later (a Latin square over rounds), so
                # a drift within rounds does not always favour the same tracer.
                for t in tracers[r % len(tracers):] + tracers[:r % len(tracers)]:
                    ms, med = run_once(t, batch, iters, warmup, a.fikit_profile, tmp)
                    runs.append({"batch": batch, "tracer": t, "round": r, "ms_per_iter": ms,
                                 "ms_per_iter_median": med})
                    print(f"bs{batch} round {r} {t:15s} {ms:.3f} ms/iter (median iteration {med:.3f})",
                          flush=True)
                    if a.json:  # every run so far, in case the run is cut off
                        with open(a.json + ".partial", "w") as f:
                            json.dump(runs, f)
    import torch

    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "command": " ".join(sys.argv),
        "runs": runs,
    }
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    print(f"\n{result['gpu']}, torch {result['torch']}, {result['date']}, {a.rounds} alternating rounds\n")
    print("Per run: mean ms/iter (all iterations) and the median iteration. Overheads: of the")
    print("medians over rounds; paired = median over rounds of (tracer / no tracer of the same round).\n")
    print("| workload | tracer | median ms/iter | overhead | paired | median iteration, ms | overhead | paired |")
    print("|---|---|---|---|---|---|---|---|")
    for batch, iters, _, tracers in plans:
        def col(t, key):
            return {x["round"]: x[key] for x in runs if x["batch"] == batch and x["tracer"] == t}
        cells = {}
        for key in ("ms_per_iter", "ms_per_iter_median"):
            base = col("none", key)
            for t in tracers:
                v = col(t, key)
                med = statistics.median(v.values())
                if t == "none":
                    cells.setdefault(t, []).extend([f"{med:.3f}", "—", "—"])
                    continue
                ov = med / statistics.median(base.values()) - 1
                paired = statistics.median(v[r] / base[r] for r in v if r in base)
                cells.setdefault(t, []).extend([f"{med:.3f}", f"{ov * 100:+.1f}%", f"{paired:.3f}"])
        for t in tracers:
            print(f"| resnet50 bs{batch} eval, {iters} iters | {t} | " + " | ".join(cells[t]) + " |")


if __name__ == "__main__":
    main()
