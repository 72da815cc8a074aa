#!/usr/bin/env bash
# The Ray driver end to end on this machine (.ci/run calls it): a local Ray
# cluster of two one-CPU nodes runs the sweep of the shipped H200 traces
# (scripts/ray/shipped-sweep.json) in 4 shards, one of which fails once on
# purpose and is retried; the merged table must equal, row for row, the same
# spec run whole by one fikit-sim. A virtual environment under target/ holds
# the pinned scripts/ray/requirements.txt (made again when that file changes).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=target/ray-venv
REQ=scripts/ray/requirements.txt
# shellcheck source=scripts/lib/venv.sh
source scripts/lib/venv.sh
pinned_venv "$VENV" "$REQ" Ray
cargo build --quiet -p fikit-sim
BIN="${CARGO_TARGET_DIR:-target}/debug/fikit-sim"
SPEC=scripts/ray/shipped-sweep.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== the spec on one machine"
"$BIN" sweep --spec "$SPEC" -o "$tmp/single.parquet"
echo "== the spec on a local Ray cluster (2 nodes, 4 shards, shard 3 fails once)"
FIKIT_RAY_FAIL_ONCE=3 "$VENV/bin/python" scripts/ray/fikit_ray.py --spec "$SPEC" --shards 4 \
  --local-nodes 2 --fikit-sim "$BIN" -o "$tmp/ray.parquet" --keep-shards "$tmp/shards" \
  2> "$tmp/driver.log" || { cat "$tmp/driver.log" >&2; exit 1; }
grep "^fikit" "$tmp/driver.log" >&2
"$BIN" sweep show "$tmp/single.parquet" --format csv > "$tmp/single.csv"
"$BIN" sweep show "$tmp/ray.parquet" --format csv > "$tmp/ray.csv"
rows=$(($(wc -l < "$tmp/single.csv") - 1))
if ! cmp -s "$tmp/single.csv" "$tmp/ray.csv"; then
  diff "$tmp/single.csv" "$tmp/ray.csv" | head -20
  echo "FAIL: the Ray sweep's merged rows differ from the single-machine sweep's" >&2
  exit 1
fi
[ "$rows" -eq 360 ] || { echo "FAIL: expected 360 rows (72 pairs x 5 policies), found $rows" >&2; exit 1; }
grep -q "4/4 shards done" "$tmp/driver.log" || { echo "FAIL: the driver did not report 4/4 shards" >&2; exit 1; }
# Merging three of the four shards must fail, naming the missing one.
if "$BIN" sweep merge -o "$tmp/partial.parquet" "$tmp"/shards/shard-{1,2,4}-of-4.parquet 2> "$tmp/merge.err"; then
  echo "FAIL: merging 3 of 4 shards succeeded" >&2; exit 1
fi
grep -q "shards missing: 3/4" "$tmp/merge.err" || { cat "$tmp/merge.err" >&2; exit 1; }
# A spec fikit-sim refuses (exit 2) is not retried: the driver exits 2.
echo '{ "traces": ["'"$PWD"'/traces/h200"], "group": 9 }' > "$tmp/bad.json"
set +e
"$VENV/bin/python" scripts/ray/fikit_ray.py --spec "$tmp/bad.json" --shards 2 --local-nodes 1 \
  --fikit-sim "$BIN" -o "$tmp/bad.parquet" 2> "$tmp/bad.log"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "2 to 8" "$tmp/bad.log" || { cat "$tmp/bad.log" >&2; echo "FAIL: a refused spec: rc $rc, expected 2" >&2; exit 1; }
echo "OK: $rows rows, the Ray sweep equals the single-machine sweep row for row"
