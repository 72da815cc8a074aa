#!/usr/bin/env bash
# One device call's share of a validation set (lab/validate/real-set.json):
# runs `fikit-run set` from the repository root for at most DEADLINE seconds
# (then Ctrl-C: the pair in progress is written incomplete and runs again next
# time; profiles and complete pairs are kept), and packs what this call wrote
# under OUT_DIR (new profiles, the pairs run) into PACK.00, PACK.01, ... (a
# gzipped tar split in 15 MB pieces: the device tool returns files of at most
# 16 MB). Unpack with `cat PACK.* | tar xzf - -C PARENT_OF_OUT_DIR` over the
# earlier calls' OUT_DIR, carry that into the next call, and the set resumes
# where it stopped (a job's runs alone are measured once per repetition and
# reused by every pair it is in, earlier calls' pairs too).
#
#   lab/validate/set-call.sh BIN_DIR SET OUT_DIR PACK [DEADLINE_S [PAIRS]]
#
# BIN_DIR holds fikit-run, fikit-profile and libfikit_collector.so (or the
# three gzipped, NAME.gz; libfikit_shim.so too for `--launch-hook preload`).
# Default DEADLINE_S: 540. PAIRS: comma-separated pair names to run (default:
# all). RUN_ARGS (environment): more options for fikit-run, split at spaces,
# e.g. RUN_ARGS='--policy exclusive,timeslice,fikit --launch-hook preload';
# RUN_ARGS="--policy exclusive,mps --repetitions 2 --trace OUT_DIR/traces"
# traces both jobs of every round (in the pack; about 3 MB a job and round).
# PROFILES (environment): comma-separated tar.xz files of profiles from an
# earlier sitting (lab/validate/pack-pair-profiles.sh), unpacked into
# OUT_DIR/profiles/ first, so their jobs are not profiled again.
# NOPACK (environment): a `find -path` pattern left out of the pack (e.g.
# '*/traces').
# QUIET=1 (environment): print only the rounds' progress, not the tables or
# the summary (they are in the pack), for out-of-sample rounds that must not
# be read before the model they will be judged with is committed.
set -uo pipefail
BIN=${1:?usage: set-call.sh BIN_DIR SET OUT_DIR PACK [DEADLINE_S [PAIRS]]}
SET=${2:?set file}
DIR=${3:?output folder}
PACK=${4:?pack file prefix}
DEADLINE=${5:-540}
PAIRS=${6:-}
SECONDS=0
for f in fikit-run fikit-profile libfikit_collector.so libfikit_shim.so; do
  if [ ! -f "$BIN/$f" ] && [ -f "$BIN/$f.gz" ]; then gunzip -c "$BIN/$f.gz" >"$BIN/$f"; fi
done
chmod +x "$BIN/fikit-run" "$BIN/fikit-profile"
mkdir -p "$DIR"
if [ -n "${PROFILES:-}" ]; then
  mkdir -p "$DIR/profiles"
  IFS=, read -ra packs <<<"$PROFILES"
  for p in "${packs[@]}"; do tar -C "$DIR/profiles" -xJf "$p" || exit 2; done
fi
STAMP=$(mktemp)
touch "$STAMP"
sleep 1
only=()
[ -n "$PAIRS" ] && only=(--pair "$PAIRS")
# shellcheck disable=SC2206 # options split at spaces, as documented
more=(${RUN_ARGS:-})
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
show() { if [ -n "${QUIET:-}" ]; then grep --line-buffered -E '^fikit-run: (pair|round) ' | sed -u -E 's/: [0-9.]+ s.*//'; else cat; fi; }
timeout --signal=INT --kill-after=30 "$DEADLINE" "$BIN/fikit-run" set "$SET" "${only[@]}" "${more[@]}" -o "$DIR" 2>&1 | tee -a "$DIR/set.log" | show
echo "== fikit-run exited ${PIPESTATUS[0]} after ${SECONDS}s"
parent=$(dirname "$DIR")
base=$(basename "$DIR")
skip=()
[ -n "${NOPACK:-}" ] && skip=(-path "$NOPACK" -prune -o)
(cd "$parent" && find "$base" "${skip[@]}" -type f -newer "$STAMP" -print0 | tar czf - --null -T -) | split -b 15M -d - "$PACK."
ls -la "$PACK".*
