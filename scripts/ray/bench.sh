#!/usr/bin/env bash
# Fleet-sweep benchmark (release build) of a spec (SPEC, default the shipped
# H200 spec scripts/ray/shipped-sweep.json): rows per second of one fikit-sim
# on one core; a one-item shard (the fixed cost); the Ray driver on a local
# cluster of 1 against 2 one-CPU nodes (4 shards, alternating, RUNS rounds,
# medians); the cost of merging (the 4 shards, and 64 shards of
# scripts/ray/bench-spec.json: 18 traces, 306 ordered pairs x 2 quanta = 612
# items, 3,060 rows). Needs the Ray environment (scripts/ray/test-local.sh
# makes it). Writes JSON to OUT.
#   [SPEC=FILE] scripts/ray/bench.sh OUT.json [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: bench.sh OUT.json [RUNS]}
RUNS=${2:-3}
cargo build --release -q -p fikit-sim
PY=target/ray-venv/bin/python
"$PY" - "$OUT" "$RUNS" "${SPEC:-scripts/ray/shipped-sweep.json}" <<'PY'
import json, os, re, statistics, subprocess, sys, tempfile, time
out, runs, SPEC = sys.argv[1], int(sys.argv[2]), sys.argv[3]
BIN = os.path.abspath("target/release/fikit-sim")
BIG = "scripts/ray/bench-spec.json"
tmp = tempfile.mkdtemp()

def timed(cmd, **kw):
    t = time.monotonic()
    r = subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)
    return time.monotonic() - t, r

one_core = []
for i in range(runs + 1):
    dt, _ = timed([BIN, "sweep", "--spec", SPEC, "-o", f"{tmp}/one.parquet", "--threads", "1"])
    if i:  # the first run warms the page cache
        one_core.append(dt)
show = subprocess.run([BIN, "sweep", "show", f"{tmp}/one.parquet", "--format", "csv"], capture_output=True, text=True, check=True)
rows = int(re.search(r"(\d+) rows", show.stderr).group(1))
items = len({line.split(",")[0] for line in show.stdout.splitlines()[1:]})
one_item = []
for _ in range(runs):
    dt, _ = timed([BIN, "sweep", "--spec", SPEC, "--shard", f"{items}/{items}", "-o", f"{tmp}/item.parquet"])
    one_item.append(dt)

ray = {1: [], 2: []}
merge4 = []
for i in range(runs):
    for nodes in (1, 2) if i % 2 == 0 else (2, 1):
        _, r = timed([sys.executable, "scripts/ray/fikit_ray.py", "--spec", SPEC, "--shards", "4",
                      "--local-nodes", str(nodes), "--fikit-sim", BIN, "-o", f"{tmp}/ray.parquet"])
        m = re.search(r"shards ([\d.]+) s, merge ([\d.]+) s", r.stderr)
        ray[nodes].append(float(m.group(1)))
        merge4.append(float(m.group(2)))

shards = []
t = time.monotonic()
for k in range(1, 65):
    p = f"{tmp}/big-{k}.parquet"
    subprocess.run([BIN, "sweep", "--spec", BIG, "--shard", f"{k}/64", "-o", p], check=True, capture_output=True)
    shards.append(p)
big_sweep = time.monotonic() - t
merge64 = []
for _ in range(runs):
    dt, r = timed([BIN, "sweep", "merge", "-o", f"{tmp}/big.parquet", *shards])
    merge64.append(dt)
big_rows = int(re.search(r": (\d+) rows", r.stderr).group(1))

med = statistics.median
res = {
    "spec": SPEC,
    "machine": f"{os.cpu_count()} cores, {os.uname().machine}",
    "one_item_shard_s": {"runs": one_item, "median": med(one_item)},
    "date": time.strftime("%Y-%m-%d"),
    "one_core": {"rows": rows, "seconds": one_core, "median_s": med(one_core), "rows_per_s": rows / med(one_core)},
    "ray_local_4_shards": {"nodes_1_s": ray[1], "nodes_2_s": ray[2], "median_1": med(ray[1]), "median_2": med(ray[2]),
                           "speedup": med(ray[1]) / med(ray[2])},
    "merge_4_shards_s": {"runs": merge4, "median": med(merge4)},
    "merge_64_shards": {"rows": big_rows, "runs_s": merge64, "median_s": med(merge64),
                        "rows_per_s": big_rows / med(merge64), "sweep_all_64_shards_one_after_another_s": big_sweep},
}
json.dump(res, open(out, "w"), indent=1)
print(json.dumps(res, indent=1))
PY
