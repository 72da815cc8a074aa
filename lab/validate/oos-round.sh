#!/usr/bin/env bash
# One device call of an out-of-sample MPS round of the real validation set:
# the round the validation log's rule is judged on (2026-11-26, "The rule for
# the next out-of-sample MPS rounds"). The first call on a machine runs the
# pressure pass of every job of the set's out-of-sample pairs (each beside
# calibrate's chase victim under MPS, one pass a run: pressure.sh) and
# `fikit-lab pressure`; with PRESSURE_FROM set it runs no pass and takes
# that file as the round's pressure.json (the weights of an earlier pass on
# the same GPU kind). Every call then goes on with set-call.sh over those
# pairs (policies POLICY, default exclusive,mps, exclusive always among them:
# the runs alone; 3 repetitions, one profile per job, only the rounds'
# progress printed) in WORK/s, which stays while the machine does: a later
# call resumes where the last stopped. ONLY_PAIRS
# (environment, comma-separated): only these of the out-of-sample pairs, and
# only their jobs in the pass (the rest of a round a machine's time did not
# cover, on a fresh machine).
#
#   lab/validate/oos-round.sh BIN_ARCHIVE TAG DEADLINE_S   (from the repository root)
#
# BIN_ARCHIVE: an xz tar of fikit-run, fikit-profile, fikit-lab and
# libfikit_collector.so. WORK (environment): the machine's work folder
# (default /tmp/oos). Writes to $OUT (the device tool's folder): device-TAG.txt,
# pack-TAG.NN (set-call.sh's pack of what this call wrote), and on the first
# call pressure.json, pressure.txt and pressure-pass.log (each job's exit, time
# and summary line beside the victim). The prediction option --pressure is
# applied afterwards, where the packs are unpacked, with `fikit-run summary
# SET --resimulate`.
set -u
ARCHIVE=${1:?usage: oos-round.sh BIN_ARCHIVE TAG DEADLINE_S}
TAG=${2:?tag}
DEADLINE=${3:?deadline, seconds}
WORK=${WORK:-/tmp/oos}
SET=lab/validate/real-set.json
SECONDS=0
BIN=$WORK/bin
mkdir -p "$BIN" && tar xJf "$ARCHIVE" -C "$BIN" && chmod +x "$BIN"/*
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; } | tee "$OUT/device-$TAG.txt"
# The out-of-sample pairs (or ONLY_PAIRS) and their jobs, from the set.
PAIRS=$(python3 -c 'import json,sys; print(",".join(p["name"] for p in json.load(open(sys.argv[1]))["pairs"] if p["sample"] == "out"))' "$SET")
[ -n "${ONLY_PAIRS:-}" ] && PAIRS=$ONLY_PAIRS
read -r -a JOBS <<<"$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); w=sys.argv[2].split(","); print(" ".join(dict.fromkeys(j for p in s["pairs"] if p["name"] in w for j in p["jobs"])))' "$SET" "$PAIRS")"
# run_pass KIND DIR BASE LIMIT_S JOB...: the pressure pass of JOB... beside
# the KIND victim (one pass a run) into WORK/DIR, then `fikit-lab pressure`
# into WORK/BASE.json and BASE.txt, copied to OUT with WORK/BASE-pass.log.
run_pass() {
  local kind=$1 dir=$2 base=$3 limit=$4
  shift 4
  KIND=$kind PASSES=1 timeout --signal=INT --kill-after=15 "$limit" lab/validate/pressure.sh "$BIN" "$SET" "$WORK/$dir" "$@" >"$WORK/$base-pass.log" 2>&1
  echo "pressure pass exit $? after ${SECONDS}s" >>"$WORK/$base-pass.log"
  local dirs=() j
  for j in "$@"; do [ -d "$WORK/$dir/$j" ] && dirs+=("$WORK/$dir/$j"); done
  "$BIN/fikit-lab" pressure "${dirs[@]}" -o "$WORK/$base.json" >"$WORK/$base.txt" 2>&1
  echo "fikit-lab pressure exit $?" >>"$WORK/$base.txt"
  cp "$WORK/$base.json" "$WORK/$base.txt" "$WORK/$base-pass.log" "$OUT/" 2>/dev/null
  cat "$WORK/$base.txt" "$WORK/$base-pass.log"
}
if [ ! -f "$WORK/pressure.json" ] && [ -n "${PRESSURE_FROM:-}" ]; then
  cp "$PRESSURE_FROM" "$WORK/pressure.json" && echo "pressure.json: $PRESSURE_FROM (no pass)"
fi
if [ ! -f "$WORK/pressure.json" ]; then
  run_pass memory p pressure 380 "${JOBS[@]}"
fi
RUN_ARGS="--policy ${POLICY:-exclusive,mps} --repetitions 3 --profiles 1" QUIET=1 \
  lab/validate/set-call.sh "$BIN" "$SET" "$WORK/s" "$OUT/pack-$TAG" "$((DEADLINE - SECONDS))" "$PAIRS"
ls -la "$OUT"
