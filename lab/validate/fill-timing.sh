#!/usr/bin/env bash
# How live FIKIT fills a server's gaps: traced FIKIT rounds of serving
# pairs already in sample, read by lab/analysis/fill-timing.py (the
# reaction from a server kernel's end to the fill, the spacing of fills,
# and what passing the GPU back costs the server). A calibration, not a
# judgement: see the lab log's "FIKIT's fills, live against simulated".
#
#   lab/validate/fill-timing.sh BIN_DIR OUT_DIR [REPS]   (from the repository root, on a GPU machine)
#
# BIN_DIR holds fikit-run, fikit-profile, libfikit_collector.so and
# libfikit_shim.so. PAIRS (environment): `SET:PAIR` entries separated by
# spaces (default vits40-bertt32 of serve-open.json, whose live gate filled
# a tenth of what the simulator does, and mobs80-efft64 of serve-oos3.json,
# about as often). PROFILES (environment): a folder of the jobs' profiles
# (NAME.parquet) made earlier, copied into each set's profile folder so that
# fikit-run does not profile them again (the rounds' gate tables and
# predictions come from them). fikit-run needs exclusive rounds beside
# FIKIT's (every slowdown is against them). SET_TIMEOUT_S (environment)
# stops each pair's fikit-run after that long and reads the repetitions
# done: a pair profiled here takes about 7 minutes before its first round
# (2026-11-30, H200). Writes OUT_DIR/fill-timing.txt and
# OUT_DIR/fill-timing.log; the traces stay in OUT_DIR/traces.
set -uo pipefail
BIN=${1:?usage: fill-timing.sh BIN_DIR OUT_DIR [REPS]}
OUT=${2:?output folder}
REPS=${3:-3}
PAIRS=${PAIRS:-"lab/validate/serve-open.json:vits40-bertt32 lab/validate/serve-oos3.json:mobs80-efft64"}
mkdir -p "$OUT"
exec > >(tee "$OUT/fill-timing.log") 2>&1
export FIKIT_COLLECTOR="$BIN/libfikit_collector.so"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
: > "$OUT/fill-timing.txt"
for entry in $PAIRS; do
  set_file=${entry%%:*}; pair=${entry#*:}
  # The pair's server (its best priority) and partner.
  read -r server partner < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=[p for p in d["pairs"] if p["name"]==sys.argv[2]][0]; print(*sorted(p["jobs"], key=lambda j: d["jobs"][j]["priority"]))' "$set_file" "$pair" 2>/dev/null)
  [ -n "${partner:-}" ] || { echo "fill-timing: $set_file has no pair $pair"; continue; }
  sdir="$OUT/set-$(basename "$set_file" .json)"
  if [ -n "${PROFILES:-}" ]; then
    mkdir -p "$sdir/profiles"
    for j in "$server" "$partner"; do
      [ -f "$PROFILES/$j.parquet" ] && cp "$PROFILES/$j.parquet" "$sdir/profiles/"
    done
  fi
  timeout "${SET_TIMEOUT_S:-86400}" "$BIN/fikit-run" set "$set_file" --pair "$pair" --policy exclusive,fikit -r "$REPS" \
    --trace "$OUT/traces" -o "$sdir"
  for k in $(seq 1 "$REPS"); do
    d="$OUT/traces/$pair/fikit-$k"
    s=$(ls "$d/$server"-*.parquet 2>/dev/null | head -1); p=$(ls "$d/$partner"-*.parquet 2>/dev/null | head -1)
    if [ -z "$s" ] || [ -z "$p" ]; then
      echo "fill-timing: $pair repetition $k: no traces of $server and $partner in $d" | tee -a "$OUT/fill-timing.txt"
      continue
    fi
    { echo "== $pair repetition $k: $server beside $partner"; python3 lab/analysis/fill-timing.py "$s" "$p"; } >> "$OUT/fill-timing.txt" 2>&1
  done
  python3 lab/analysis/fills.py "$sdir/$pair/run.json" >> "$OUT/fill-timing.txt" 2>&1
done
cat "$OUT/fill-timing.txt"
