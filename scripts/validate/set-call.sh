#!/usr/bin/env bash
# One device call's share of a validation set (scripts/validate/real-set.json):
# runs `fikit-run --set` from the repository root for at most DEADLINE seconds
# (then Ctrl-C: the pair in progress is written incomplete and runs again next
# time; profiles and complete pairs are kept), and packs OUT_DIR into TAR, one
# file for the way back. Carry OUT_DIR (unpacked from the last call's TAR) into
# the next call and the set resumes where it stopped.
#
#   scripts/validate/set-call.sh BIN_DIR SET OUT_DIR TAR [DEADLINE_S]
#
# BIN_DIR holds fikit-run, fikit-profile and libfikit_collector.so (or the
# three gzipped, NAME.gz). Default DEADLINE_S: 540.
set -uo pipefail
BIN=${1:?usage: set-call.sh BIN_DIR SET OUT_DIR TAR [DEADLINE_S]}
SET=${2:?set file}
DIR=${3:?output folder}
TAR=${4:?tar file to write}
DEADLINE=${5:-540}
SECONDS=0
for f in fikit-run fikit-profile libfikit_collector.so; do
  if [ ! -f "$BIN/$f" ] && [ -f "$BIN/$f.gz" ]; then gunzip -c "$BIN/$f.gz" >"$BIN/$f"; fi
done
chmod +x "$BIN/fikit-run" "$BIN/fikit-profile"
mkdir -p "$DIR"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
timeout --signal=INT --kill-after=30 "$DEADLINE" "$BIN/fikit-run" --set "$SET" -o "$DIR" 2>&1 | tee -a "$DIR/set.log"
echo "== fikit-run exited ${PIPESTATUS[0]} after ${SECONDS}s"
tar czf "$TAR" -C "$(dirname "$DIR")" "$(basename "$DIR")"
ls -la "$TAR"
