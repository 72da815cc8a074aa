#!/usr/bin/env python3
"""A batch-1 job's slowdown while resnet50 batch-128 inference runs beside it:
real PyTorch runs against live replay against simulation (lab/log/2026-11.md,
2026-11-22, "Real workloads beside a heavy job").

    python3 lab/analysis/real-vs-sim.py --sim target/release/fikit-sim \\
        --model simulator/models/h200.json \\
        --real reports/real-vs-sim/real-beside-bs128/h200-*.jsonl \\
        --replay reports/real-vs-sim/h200-replay-validation.json \\
        --alone reports/validation/h200-exclusive-alone.json

The committed inputs above are in raw archives: first
`tar -xJf raw.tar.xz` in reports/real-vs-sim/ and in reports/validation/.

Real (lab/validate/real-beside-bs128.sh): mean ms per iteration beside the
background job / alone, per round, the median over rounds; MPS against the
job alone under MPS. Replay (`fikit-lab validate --policy mps` on
lab/scenarios/beside-bs128/): live JCT under the policy / the trace
replayed alone (timeslice JCT = mps JCT x live_vs_timeslice). Simulation:
`fikit-sim --scenario … --policy timeslice,mps --model …`, JCT / isolated JCT.

With --from-rows (a validation run of exclusive, timeslice and mps, e.g. on
lab/scenarios/beside-bs128-steady/), replay and simulation are both
taken from the report's rows: JCT under the policy / JCT under exclusive;
add --resim to simulate with --model instead (its corun_slowdown applies,
where validate used the replay's).
"""
import argparse, glob, json, os, statistics, subprocess

MODELS = {"bert-base": "bert-base-bs1-eval", "vit_b_16": "vit_b_16-bs1-eval",
          "mobilenet_v3_large": "mobilenet_v3_large-bs1-eval", "resnet50": "resnet50-bs1-eval",
          "efficientnet_b0": "efficientnet_b0-bs1-eval"}


def simulate(a):
    """Each batch-1 job's simulated slowdown (JCT / isolated JCT) under time
    slicing and MPS: `fikit-sim --scenario … --model …`, which simulates real
    kernels (the model's corun_slowdown, not the replay's)."""
    sim = {}
    for m, job in MODELS.items():
        scen = os.path.join(a.scenarios, f"{m}-b1.json")
        out = subprocess.run([a.sim, "--scenario", scen, "--policy", "timeslice,mps", "--model", a.model,
                              "--format", "json", "--no-plots"], capture_output=True, text=True, check=True)
        for j in json.loads(out.stdout)["jobs"]:
            if j["job"] == job:
                # JCT over JCT alone, as the live replay measures (the
                # report's `slowdown` is of regions, from the first launch).
                sim.setdefault(job, {})[j["policy"]] = j["jct_ns"] / j["isolated_jct_ns"]
    return sim


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--real", nargs="+", required=True)
    ap.add_argument("--replay", required=True)
    ap.add_argument("--alone", help="the traces replayed alone (not with --from-rows)")
    ap.add_argument("--from-rows", action="store_true",
                    help="replay and simulated slowdowns from the report's exclusive rows")
    ap.add_argument("--resim", action="store_true",
                    help="with --from-rows: simulated slowdowns from --model (fikit-sim --scenario on "
                         "--scenarios), not from the report's rows (which validate simulated as the replay runs)")
    ap.add_argument("--scenarios", default="lab/scenarios/beside-bs128")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()

    real = {}
    for p in a.real:
        by = {}
        for line in open(p):
            x = json.loads(line)
            by[(x["model"], x["setting"])] = x["run"]["ms_per_iter"]
        for m in MODELS:
            real.setdefault(m, {"timeslice": [], "mps": []})
            real[m]["timeslice"].append(by[(m, "timeslice")] / by[(m, "alone")])
            real[m]["mps"].append(by[(m, "mps")] / by[(m, "mps-alone")])
    replay, sim = {}, {}
    report = json.load(open(a.replay))["rows"]
    if a.from_rows:
        ex = {(r["scenario"], r["job"]): r for r in report if r["policy"] == "exclusive"}
        for r in report:
            if r["priority"] == 0 and r["policy"] in ("timeslice", "mps"):
                e = ex[(r["scenario"], r["job"])]
                replay.setdefault(r["job"], {})[r["policy"]] = r["live_jct_ns"] / e["live_jct_ns"]
                sim.setdefault(r["job"], {})[r["policy"]] = r["sim_jct_ns"] / e["sim_jct_ns"]
    else:
        alone = {j["job"]: j["jct_ns"] for j in json.load(open(a.alone))["jobs"]}
        for r in report:
            if r["policy"] == "mps" and r["priority"] == 0:
                iso = alone[r["job"]]
                replay[r["job"]] = {"mps": r["live_jct_ns"] / iso,
                                    "timeslice": r["live_jct_ns"] * r["live_vs_timeslice"] / iso}
    if a.resim or not a.from_rows:
        sim = simulate(a)
    rows = []
    print("| batch-1 job | time slicing: real | replay | simulated | MPS: real | replay | simulated |")
    print("|---|---|---|---|---|---|---|")
    for m, job in MODELS.items():
        r = {k: statistics.median(v) for k, v in real[m].items()}
        rows.append({"job": job, "real": r, "real_rounds": real[m], "replay": replay[job], "sim": sim[job]})
        print(f"| {job} | {r['timeslice']:.2f}x | {replay[job]['timeslice']:.2f}x | {sim[job]['timeslice']:.2f}x "
              f"| {r['mps']:.2f}x | {replay[job]['mps']:.2f}x | {sim[job]['mps']:.2f}x |")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
