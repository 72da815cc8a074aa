#!/usr/bin/env bash
# Sweep scaling: `fikit-sim sweep` over every ordered pair of the shipped traces
# (9 traces: 72 pairs, every policy), with 1 worker thread against 2, timed
# side by side by hyperfine (alternating is its default order per run set).
# Usage: scripts/bench/bench-sweep.sh [RUNS]   (default 5). Needs hyperfine.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-5}"
cargo build --release -q -p fikit-sim
bin=target/release/fikit-sim
nproc
hyperfine --warmup 1 --runs "$runs" --export-json /tmp/bench-sweep.json \
    "$bin sweep --format csv --threads 1 traces/" \
    "$bin sweep --format csv --threads 2 traces/"
python3 - <<'PY'
import json, statistics
r = json.load(open("/tmp/bench-sweep.json"))["results"]
m = [statistics.median(x["times"]) for x in r]
print(f"median 1 thread {m[0]:.3f} s, 2 threads {m[1]:.3f} s, speedup {m[0] / m[1]:.2f}x")
PY
