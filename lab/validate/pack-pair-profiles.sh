#!/usr/bin/env bash
# Packs a set's profiles (made in an earlier sitting of the same GPU) one
# tar.xz per pair, each small enough to travel with the release binaries
# to the device (its 64 MiB limit counts the whole tracked tree): carry
# one or two per call and name them in set-call.sh's PROFILES, so a sitting
# runs rounds instead of profiling again (about 85 s a job).
#
#   lab/validate/pack-pair-profiles.sh SET PROFILES_DIR OUT_DIR
#
# PROFILES_DIR holds NAME.parquet (and NAME.log) per job, as `fikit-run set`
# writes them under OUT/profiles/. Writes OUT_DIR/PAIR.tar.xz; a job with no
# profile there is an error (exit 2). Takes about 10 s a pair (xz -9e).
set -euo pipefail
SET=${1:?usage: pack-pair-profiles.sh SET PROFILES_DIR OUT_DIR}
DIR=${2:?profiles folder}
OUT=${3:?output folder}
mkdir -p "$OUT"
python3 - "$SET" <<'PY' | while read -r pair jobs; do
import json, sys
s = json.load(open(sys.argv[1]))
for p in s["pairs"]:
    print(p["name"], " ".join(p["jobs"]))
PY
  files=()
  for j in $jobs; do
    [ -f "$DIR/$j.parquet" ] || { echo "pack-pair-profiles: $DIR/$j.parquet: no profile of job $j (pair $pair)" >&2; exit 2; }
    files+=("$j.parquet")
    [ -f "$DIR/$j.log" ] && files+=("$j.log")
  done
  tar -C "$DIR" -cf - "${files[@]}" | xz -9e >"$OUT/$pair.tar.xz"
  echo "$OUT/$pair.tar.xz: $(stat -c %s "$OUT/$pair.tar.xz") bytes"
done
