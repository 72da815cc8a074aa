#!/usr/bin/env bash
# Traced co-runs of a set's pairs under MPS, with each job's traces alone, to
# split a batch-1 job's real MPS slowdown into waits, kernel stretch and host
# (issue 45, lab log 2026-11-29: read by corun-pair.py and
# iteration-split.py). One GPU; per pair, in order, while DEADLINE_S (from
# the script's start) leaves at least 240 s: `fikit-run scenario` with the
# pair's two jobs at the set's priorities, `--policy exclusive,mps -r 2
# --trace`. The traces are cut to the columns those scripts read (no kernel
# names; kernel_key kept), zstd, and go back with each pair's run.json,
# table and log as one tar in pieces of 15 MB, $OUT/mps-traced.tar.NN.
#
#   lab/validate/mps-traced.sh BIN_ARCHIVE SET WORK DEADLINE_S PAIR...
# BIN_ARCHIVE: an xz tar of the binaries or a folder holding them
# (lab/validate/build-bins.sh). From the repository root; needs pyarrow.
set -u
ARCHIVE=${1:?usage: mps-traced.sh BIN_ARCHIVE SET WORK DEADLINE_S PAIR...}
SET=${2:?set file}
WORK=${3:?work folder}
DEADLINE=${4:?deadline in seconds}
shift 4
OUTDIR=${OUT:-/tmp/mps-traced-out}
mkdir -p "$WORK/bin" "$WORK/keep" "$OUTDIR"
# shellcheck source=lab/validate/lib/bins.sh
source "$(dirname "$0")/lib/bins.sh"
unpack_bins "$ARCHIVE" "$WORK/bin" || exit 2
t0=$SECONDS
for pair in "$@"; do
  if [ $((DEADLINE - (SECONDS - t0))) -lt 240 ]; then echo "mps-traced: $pair not run: deadline"; continue; fi
  mapfile -t jobs < <(python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
p = [p for p in s['pairs'] if p['name'] == sys.argv[2]]
if not p: sys.exit(f'{sys.argv[1]}: no pair {sys.argv[2]}')
for j in p[0]['jobs']:
    print(f\"{j}:{s['jobs'][j]['priority']}=\" + ' '.join(s['jobs'][j]['command']))" "$SET" "$pair") || exit 2
  args=()
  for j in "${jobs[@]}"; do args+=(--job "$j"); done
  echo "mps-traced: $pair from $((SECONDS - t0)) s"
  "$WORK/bin/fikit-run" scenario "${args[@]}" --policy exclusive,mps -r 2 --round-timeout-s 150 \
    --trace "$WORK/$pair/traces" -o "$WORK/$pair/run" > "$WORK/$pair.log" 2>&1
  echo "mps-traced: $pair rc $? at $((SECONDS - t0)) s"
  mkdir -p "$WORK/keep/$pair"
  cp "$WORK/$pair/run/run.json" "$WORK/$pair/run/table.txt" "$WORK/$pair.log" "$WORK/keep/$pair/" 2>/dev/null
  python3 - "$WORK/$pair/traces" "$WORK/keep/$pair/traces" <<'EOF'
import pathlib, sys
import pyarrow.parquet as pq
keep = ["kind", "start_ns", "end_ns", "stream", "correlation_id", "grid_x", "grid_y", "grid_z",
        "block_x", "block_y", "block_z", "registers_per_thread", "static_shared_bytes",
        "dynamic_shared_bytes", "kernel_key", "sync_kind", "launch_start_ns", "launch_end_ns"]
delta = ["start_ns", "end_ns", "launch_start_ns", "launch_end_ns", "correlation_id"]
src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in sorted(src.glob("*/*.parquet")):
    meta = {k: v for k, v in pq.read_metadata(f).metadata.items() if k != b"ARROW:schema"}
    names = pq.read_schema(f).names
    t = pq.read_table(f, columns=[c for c in keep if c in names]).replace_schema_metadata(meta)
    (dst / f.parent.name).mkdir(parents=True, exist_ok=True)
    pq.write_table(t, dst / f.parent.name / f.name, compression="zstd", compression_level=9,
                   use_dictionary=[c for c in t.column_names if c not in delta],
                   column_encoding={c: "DELTA_BINARY_PACKED" for c in delta if c in t.column_names})
    print(f"mps-traced: {f.parent.name}/{f.name} {t.num_rows} rows")
EOF
done
tar -C "$WORK/keep" -cf - . | split -b 15M -d - "$OUTDIR/mps-traced.tar."
ls -la "$OUTDIR"
