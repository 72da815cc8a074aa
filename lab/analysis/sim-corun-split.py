#!/usr/bin/env python3
"""The model's side of lab/analysis/corun-pair.py: how fikit-sim splits
a small job's time beside a busy partner under MPS, for the same pair and
the same alignment as one real co-run of `fikit-run`.

From RUN_DIR/run.json (a `fikit-run` pair run with an MPS round) it takes
both jobs' first kernel launches in MPS repetition REP (default 1), writes a
fikit-sim scenario that starts each profile so (less the time its profile
took from its first host action to its first kernel, as fikit-run's
prediction does), exports the simulated MPS run (`fikit-sim export
--perfetto --policy mps`, MODEL if given) and prints, over the small job's
kernels after its first fifth (model load and warm-up left out, as
corun-pair.py does):
- the kernels' recorded time and simulated time (their stretch);
- the time they waited for SM room (the export's `waited_ns`), all and in
  waits over 50 µs;
- the partner's kernels that ran inside that span, recorded and simulated.

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars numpy
    /tmp/hs/bin/python lab/analysis/sim-corun-split.py FIKIT_SIM RUN_DIR SMALL_PROFILE PARTNER_PROFILE [MODEL [REP]]

The small job is the run's priority-0 job. Needs FIKIT_SIM (a built
fikit-sim); writes its scenario and export to a temporary folder. Exit 2 on
bad input.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl


def lead_ns(profile):
    """Time from a profile's first host action to its first kernel."""
    t = pl.read_parquet(profile)
    first_kernel = t.filter(pl.col("kind") == "kernel")["start_ns"].min()
    first = min(t[c].min() for c in ("start_ns", "launch_start_ns") if c in t.columns)
    return first_kernel - first


def scenario(run_dir, small_profile, partner_profile, rep):
    """The pair as a fikit-sim scenario aligned as MPS repetition `rep`."""
    run = json.loads((Path(run_dir) / "run.json").read_text())
    rounds = [r for r in run["rounds"] if r["policy"] == "mps" and r["repetition"] == rep - 1]
    if not rounds:
        raise ValueError(f"{run_dir}/run.json: no MPS repetition {rep}")
    prio = {name: priority for name, _command, priority in run["jobs"]}
    first = {j["job"]: j["first_launch_ns"] for j in rounds[0]["jobs"]}
    small = next(n for n, p in prio.items() if p == 0)
    partner = next(n for n in prio if n != small)
    start = {small: first[small] - lead_ns(small_profile), partner: first[partner] - lead_ns(partner_profile)}
    t0 = min(start.values())
    return {
        "name": f"{small} beside {partner}, MPS repetition {rep} of {run_dir}",
        "jobs": [
            {"trace": str(Path(small_profile).resolve()), "priority": 0, "start_ns": start[small] - t0},
            {"trace": str(Path(partner_profile).resolve()), "priority": 9, "start_ns": start[partner] - t0},
        ],
    }


def kernels(export):
    """The export's kernels, each (start, duration, recorded duration,
    waited), ns, in start order: the small (priority-0) job's after its
    first fifth, and every other job's."""
    d = json.loads(Path(export).read_text())
    events = d["traceEvents"] if isinstance(d, dict) else d
    jobs = {e["pid"]: e for e in events if e.get("cat") == "job"}
    small = next(p for p, j in jobs.items() if j["args"]["priority"] == 0)
    s, p = [], []
    for e in events:
        if e.get("cat") == "kernel":
            a = e["args"]
            row = (e["ts"] * 1e3, e["dur"] * 1e3, a["recorded_duration_ns"], a.get("waited_ns", 0))
            (s if e["pid"] == small else p).append(row)
    s = np.array(sorted(s))
    return s[len(s) // 5 :], np.array(sorted(p))


def split(export):
    """The small job's kernels and waits and the partner's kernels in its span."""
    s, p = kernels(export)
    t0, t1 = s[0, 0], s[-1, 0] + s[-1, 1]
    inside = p[(p[:, 0] >= t0) & (p[:, 0] + p[:, 1] <= t1)]
    waited = s[:, 3]
    return (
        f"small job: {len(s)} kernels over {(t1 - t0) / 1e6:.1f} ms; kernels {s[:, 2].sum() / 1e6:.1f} ms recorded, "
        f"{s[:, 1].sum() / 1e6:.1f} ms simulated ({s[:, 1].sum() / s[:, 2].sum():.2f}x); waited for SM room "
        f"{waited.sum() / 1e6:.1f} ms, in waits over 50 µs {waited[waited > 50_000].sum() / 1e6:.1f} ms\n"
        f"the partner's kernels in that span: {len(inside)}, {inside[:, 2].sum() / 1e6:.1f} ms recorded, "
        f"{inside[:, 1].sum() / inside[:, 2].sum():.3f}x"
    )


def main(argv):
    if len(argv) not in (5, 6, 7):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sim, run_dir, small_profile, partner_profile = argv[1:5]
    model = argv[5] if len(argv) > 5 else None
    rep = int(argv[6]) if len(argv) > 6 else 1
    try:
        sc = scenario(run_dir, small_profile, partner_profile, rep)
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as e:
        print(f"sim-corun-split.py: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        try:
            path = export(sim, sc, model, tmp)
        except ValueError as e:
            print(f"sim-corun-split.py: {e}", file=sys.stderr)
            return 2
        print(f"# {sc['name']}; model: {model or 'the shipped one of the profiles GPU'}")
        print(split(path))
    return 0


def export(sim, sc, model, tmp):
    """Simulates scenario `sc` under MPS with `sim` (MODEL if given) into
    folder `tmp`; the path of its Perfetto export. ValueError when fikit-sim
    fails."""
    path = Path(tmp) / "scenario.json"
    path.write_text(json.dumps(sc))
    out = Path(tmp) / "sim.json"
    cmd = [sim, "export", "--perfetto", "--policy", "mps", "--scenario", str(path), "-o", str(out)]
    if model:
        cmd[2:2] = ["--model", model]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv))
