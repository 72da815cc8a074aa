#!/usr/bin/env bash
# Writes the user-facing outputs of fikit-sim (quick start, inspect, the
# pairwise screen, sweeps, exports, HTML) into OUT, one file per command, so
# two builds can be compared byte for byte: run it at each commit, then
# `diff -r OUT_A OUT_B`. Usage: same-outputs.sh FIKIT_SIM OUT
set -euo pipefail
sim=$1; out=$2
cd "$(dirname "$0")/../.."
mkdir -p "$out"; rm -rf "${out:?}"/*
# A fixed scratch folder: the messages name it, so two runs compare exactly.
tmp="${TMPDIR:-/tmp}/fikit-same-outputs"; rm -rf "$tmp"; mkdir -p "$tmp"
run() { # name, args...
  local name=$1; shift
  "$sim" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc"
}
for gpu in h200 h100; do
  run "screen-$gpu" "traces/$gpu/" --no-plots
  run "screen-$gpu-json" "traces/$gpu/" --no-plots --format json
  run "inspect-$gpu" inspect "traces/$gpu/"
  run "inspect-$gpu-json" inspect "traces/$gpu/" --format json
  run "sweep-$gpu" sweep "traces/$gpu/"
  run "sweep-$gpu-csv" sweep "traces/$gpu/" --format csv
done
run jobs traces/h200/ --jobs bert-base-bs1-eval,resnet50-bs128-eval --plots "$tmp/plots" --html "$tmp/report.html"
cp "$tmp/report.html" "$out/jobs.html"
run together traces/h200/ --together --no-plots --format csv
for s in simulator/scenarios/*.json; do
  run "scenario-$(basename "$s" .json)" --scenario "$s" --no-plots
done
run sweep-spec sweep --spec scripts/ray/shipped-sweep.json --format csv
run export-traces export --perfetto -o "$tmp/t.json" traces/h200/bert-base-bs1-eval-1319.parquet traces/h200/resnet50-bs128-eval-839.parquet --max-events 5000
cp "$tmp/t.json" "$out/export-traces.json"
run export-sim export --perfetto -o "$tmp/s.json" --policy fikit,mps traces/h200/bert-base-bs1-eval-1319.parquet traces/h200/resnet50-bs128-eval-839.parquet --max-events 5000
cp "$tmp/s.json" "$out/export-sim.json"
