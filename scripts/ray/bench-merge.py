#!/usr/bin/env python3
"""Merge cost at fleet scale: writes SHARDS synthetic shard files of ROWS rows
each (the rows-file schema and metadata of `fikit-sim sweep --shard`, values
made up: item numbers contiguous per shard, five policies per item) and times
`fikit-sim sweep merge` on them, with its peak memory (GNU time).

    python3 scripts/ray/bench-merge.py FIKIT_SIM SHARDS ROWS_PER_SHARD OUT.json

Needs polars (the notebooks' environment has it: target/notebook-venv).
"""
import json, os, re, subprocess, sys, tempfile, time

import polars as pl

fikit_sim, shards, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = sys.argv[4]
policies = ["exclusive", "timeslice", "mps", "preemptive", "fikit"]
items_per = per // len(policies)
items = items_per * shards
tmp = tempfile.mkdtemp()
files = []
for k in range(1, shards + 1):
    lo = (items * (k - 1)) // shards
    hi = (items * k) // shards
    n = (hi - lo) * len(policies)
    item = [i for i in range(lo, hi) for _ in policies]
    df = pl.DataFrame({
        "item": pl.Series(item, dtype=pl.UInt64),
        "model": ["NVIDIA H200"] * n,
        "params": ["{}"] * n,
        "high": [f"job-{i % 10000}" for i in item],
        "low": [f"job-{(i * 7) % 10000}" for i in item],
        "policy": policies * (hi - lo),
        "high_vs_timeslice": [1.0 + (i % 13) / 100 for i in range(n)],
        "low_vs_timeslice": [1.0] * n,
        "high_slowdown": [1.0 + (i % 17) / 100 for i in range(n)],
        "low_slowdown": [1.1] * n,
        "high_p99_ns": pl.Series([1_000_000 + i for i in range(n)], dtype=pl.Int64),
    })
    p = os.path.join(tmp, f"s{k}.parquet")
    df.write_parquet(p, compression="zstd", metadata={
        "fikit.sweep.spec_hash": "0123456789abcdef", "fikit.sweep.items": str(items),
        "fikit.sweep.shard": f"{k}/{shards}", "fikit.sweep.producer": "bench-merge.py"})
    files.append(p)
size = sum(os.path.getsize(f) for f in files)
t = time.monotonic()
r = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", fikit_sim, "sweep", "merge", "-o",
                    os.path.join(tmp, "all.parquet"), *files], capture_output=True, text=True)
dt = time.monotonic() - t
assert r.returncode == 0, r.stderr
rss = int(re.search(r"maxrss_kb=(\d+)", r.stderr).group(1))
total = items * len(policies)
res = {"shards": shards, "rows": total, "shard_bytes": size, "merge_s": dt,
       "rows_per_s": total / dt, "max_rss_mb": rss / 1024,
       "merged_bytes": os.path.getsize(os.path.join(tmp, "all.parquet"))}
json.dump(res, open(out, "w"), indent=1)
print(json.dumps(res, indent=1))
