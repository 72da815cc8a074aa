#!/usr/bin/env bash
# One folder for a set's summary from the sittings that ran its pairs:
# every pair folder (NAME-NAME/) and every profile (profiles/*.parquet,
# *.log) of each sitting folder (a gpus-call.sh WORK/gK or set-call.sh
# output), later sittings over earlier ones, into OUT; then, with a set
# file, `fikit-run summary SET -o OUT` (OUT/summary.txt, .json) and, where
# FIKIT_RUN is not on PATH, BIN/fikit-run.
#
#   lab/validate/merge-sittings.sh OUT SITTING... [-- SET [FIKIT_RUN]]
#
# A sitting packed by gpus-call.sh comes back as pieces: `cat PACK.* | tar
# -xJ -C DIR` (seeds and later packs in order) gives DIR/WORK/gK.
set -euo pipefail
OUT=${1:?usage: merge-sittings.sh OUT SITTING... [-- SET [FIKIT_RUN]]}
shift
sittings=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  sittings+=("$1")
  shift
done
[ ${#sittings[@]} -ge 1 ] || { echo "merge-sittings.sh: no sitting named" >&2; exit 2; }
mkdir -p "$OUT/profiles"
for s in "${sittings[@]}"; do
  [ -d "$s" ] || { echo "merge-sittings.sh: $s: not a folder" >&2; exit 2; }
  n=0
  for p in "$s"/*-*/; do
    [ -f "$p/run.json" ] || continue
    rm -rf "${OUT:?}/$(basename "$p")"
    cp -r "$p" "$OUT/"
    n=$((n + 1))
  done
  if [ -d "$s/profiles" ]; then
    find "$s/profiles" -maxdepth 1 -type f \( -name '*.parquet' -o -name '*.log' \) -exec cp {} "$OUT/profiles/" \;
  fi
  echo "merge-sittings.sh: $s: $n pair folders"
done
if [ "${1:-}" = -- ]; then
  SET=${2:?a set file after --}
  RUN=${3:-fikit-run}
  "$RUN" summary "$SET" -o "$OUT" >"$OUT/summary-command.log" 2>&1 ||
    { echo "merge-sittings.sh: fikit-run summary failed (see $OUT/summary-command.log)" >&2; exit 1; }
  echo "merge-sittings.sh: $OUT/summary.txt, $OUT/summary.json"
fi
