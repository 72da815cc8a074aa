#!/usr/bin/env python3
"""How much of each per-SM resource a trace's kernels take, weighted by
kernel time: what the simulator's single SM-demand number hides
(lab/log/2026-11.md, 2026-11-23, "A block-slot MPS model, tried and
dropped").

    fikit-sim export --perfetto -o T.json traces/h200/TRACE.parquet
    python3 lab/analysis/sm-resources.py [--json OUT] T.json [T.json ...]

Per kernel, the resident blocks are its blocks, at most as many as fit on the
device (blocks per SM from threads, registers, shared memory and the block
limit, as `fikit_sim::job::blocks_per_sm` counts them, times the SMs); its
share of a resource is those blocks' need over the device's total. `demand`
is the simulator's SM demand (blocks over what fits, at most 1). The limits
default to the shipped H200 traces' metadata (`fikit.sm_count`,
`fikit.max_*_per_sm`).
"""
import argparse, json

LIMITS = {"threads": 2048, "registers": 65536, "shared_bytes": 233472, "blocks": 32}


def shares(path, sms, lim):
    ev = json.load(open(path))["traceEvents"]
    total, acc = 0.0, dict.fromkeys(list(lim) + ["demand"], 0.0)
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        a = e["args"]
        gx, gy, gz = a["grid"]
        bx, by, bz = a["block"]
        blocks, threads = gx * gy * gz, max(bx * by * bz, 1)
        need = {"threads": threads, "registers": threads * max(a["registers_per_thread"], 1),
                "shared_bytes": a["static_shared_bytes"] + a["dynamic_shared_bytes"], "blocks": 1}
        per_sm = max(min(lim[r] // need[r] for r in lim if need[r]), 1)
        resident = min(blocks, per_sm * sms)
        d = e["dur"]
        for r in lim:
            acc[r] += d * min(1.0, resident * need[r] / (lim[r] * sms))
        acc["demand"] += d * min(1.0, blocks / (per_sm * sms))
        total += d
    return {k: round(v / total, 3) for k, v in acc.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exports", nargs="+")
    ap.add_argument("--sms", type=int, default=132)
    for r, v in LIMITS.items():
        ap.add_argument(f"--max-{r.replace('_', '-')}-per-sm", type=int, default=v, dest=r)
    ap.add_argument("--json")
    a = ap.parse_args()
    lim = {r: getattr(a, r) for r in LIMITS}
    out = {"sms": a.sms, "per_sm_limits": lim,
           "kernel_time_weighted_shares": {p.rsplit("/", 1)[-1]: shares(p, a.sms, lim) for p in a.exports}}
    print(json.dumps(out, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
