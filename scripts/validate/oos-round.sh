#!/usr/bin/env bash
# One device call of an out-of-sample MPS round of the real validation set:
# the round the validation log's rule is judged on (2026-11-26, "The rule for
# the next out-of-sample MPS rounds"). The first call on a machine runs the
# pressure pass of every job of the set's out-of-sample pairs (each beside
# calibrate's chase victim under MPS, one pass a run: pressure.sh) and
# `fikit-sim pressure` (with GEMM_JOBS set, those jobs beside the GEMM
# victim too: pressure-gemm.json); every call then goes on with set-call.sh
# over those pairs (exclusive and MPS, 3 repetitions, one profile per job, only the
# rounds' progress printed) in WORK/s, which stays while the machine does: a
# later call resumes where the last stopped.
#
#   scripts/validate/oos-round.sh BIN_ARCHIVE TAG DEADLINE_S   (from the repository root)
#
# BIN_ARCHIVE: an xz tar of fikit-run, fikit-profile, fikit-sim and
# libfikit_collector.so. WORK (environment): the machine's work folder
# (default /tmp/oos). Writes to $OUT (the device tool's folder): device-TAG.txt,
# pack-TAG.NN (set-call.sh's pack of what this call wrote), and on the first
# call pressure.json, pressure.txt and pressure-pass.log (each job's exit, time
# and summary line beside the victim). The prediction options (--pressure,
# --host-speed-from-alone) are applied afterwards with --resimulate, where the
# packs are unpacked.
set -u
ARCHIVE=${1:?usage: oos-round.sh BIN_ARCHIVE TAG DEADLINE_S}
TAG=${2:?tag}
DEADLINE=${3:?deadline, seconds}
WORK=${WORK:-/tmp/oos}
SET=scripts/validate/real-set.json
SECONDS=0
BIN=$WORK/bin
mkdir -p "$BIN" && tar xJf "$ARCHIVE" -C "$BIN" && chmod +x "$BIN"/*
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; } | tee "$OUT/device-$TAG.txt"
# The out-of-sample pairs and their jobs, from the set.
PAIRS=$(python3 -c 'import json,sys; print(",".join(p["name"] for p in json.load(open(sys.argv[1]))["pairs"] if p["sample"] == "out"))' "$SET")
read -r -a JOBS <<<"$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join(dict.fromkeys(j for p in s["pairs"] if p["sample"] == "out" for j in p["jobs"])))' "$SET")"
if [ ! -f "$WORK/pressure.json" ]; then
  KIND=memory PASSES=1 timeout --signal=INT --kill-after=15 380 scripts/validate/pressure.sh "$BIN" "$SET" "$WORK/p" "${JOBS[@]}" >"$WORK/pressure-pass.log" 2>&1
  echo "pressure pass exit $? after ${SECONDS}s" >>"$WORK/pressure-pass.log"
  dirs=()
  for j in "${JOBS[@]}"; do [ -d "$WORK/p/$j" ] && dirs+=("$WORK/p/$j"); done
  "$BIN/fikit-sim" pressure "${dirs[@]}" -o "$WORK/pressure.json" >"$WORK/pressure.txt" 2>&1
  echo "fikit-sim pressure exit $?" >>"$WORK/pressure.txt"
  cp "$WORK/pressure.json" "$WORK/pressure.txt" "$WORK/pressure-pass.log" "$OUT/" 2>/dev/null
  cat "$WORK/pressure.txt" "$WORK/pressure-pass.log"
  # GEMM_JOBS (environment): jobs also run beside the GEMM victim (KIND=gemm),
  # for `fikit-run --pressure-busiest pressure-gemm.json`.
  if [ -n "${GEMM_JOBS:-}" ]; then
    read -r -a gemm_jobs <<<"$GEMM_JOBS"
    KIND=gemm timeout --signal=INT --kill-after=15 $((45 * ${#gemm_jobs[@]} + 30)) scripts/validate/pressure.sh "$BIN" "$SET" "$WORK/g" "${gemm_jobs[@]}" >"$WORK/pressure-gemm-pass.log" 2>&1
    echo "gemm pass exit $? after ${SECONDS}s" >>"$WORK/pressure-gemm-pass.log"
    gdirs=()
    for j in "${gemm_jobs[@]}"; do [ -d "$WORK/g/$j" ] && gdirs+=("$WORK/g/$j"); done
    "$BIN/fikit-sim" pressure "${gdirs[@]}" -o "$WORK/pressure-gemm.json" >"$WORK/pressure-gemm.txt" 2>&1
    echo "fikit-sim pressure exit $?" >>"$WORK/pressure-gemm.txt"
    cp "$WORK/pressure-gemm.json" "$WORK/pressure-gemm.txt" "$WORK/pressure-gemm-pass.log" "$OUT/" 2>/dev/null
    cat "$WORK/pressure-gemm.txt"
  fi
fi
RUN_ARGS='--policy exclusive,mps --repetitions 3 --profiles 1' QUIET=1 \
  scripts/validate/set-call.sh "$BIN" "$SET" "$WORK/s" "$OUT/pack-$TAG" "$((DEADLINE - SECONDS))" "$PAIRS"
ls -la "$OUT"
