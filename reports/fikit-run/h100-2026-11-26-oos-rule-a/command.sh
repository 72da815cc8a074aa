#!/usr/bin/env bash
# reports/fikit-run/h100-2026-11-26-oos-rule-a/: the command record of this round, as committed with it
# (call.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# One call of the out-of-sample MPS round (the rule: validation log,
# 2026-11-26, "The rule for the next out-of-sample MPS rounds"). The first
# call on a machine runs the pressure pass of the set's out-of-sample jobs
# (the chase victim, one pass a run) and `fikit-sim pressure`; every call
# then goes on with set-call.sh over the out-of-sample pairs in /tmp/oos/s
# (kept while the machine stays warm; a call resumes where the last stopped).
#   .gpu/oos/call.sh TAG DEADLINE_S
set -u
TAG=$1; DEADLINE=$2
SECONDS=0
mkdir -p .gpu/set /tmp/oos && tar xJf .gpu/oos/bin.tar.xz -C .gpu/set && chmod +x .gpu/set/*
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; } | tee "$OUT/device-$TAG.txt"
JOBS="bertb1 vitb1 gpt2dec r50b1serve mobb1 bertb8 r50b128 r50t32 bertt32"
if [ ! -f /tmp/oos/pressure.json ]; then
  # shellcheck disable=SC2086
  KIND=memory PASSES=1 timeout --signal=INT --kill-after=15 320 lab/validate/pressure.sh .gpu/set lab/validate/real-set.json /tmp/oos/p $JOBS > /tmp/oos/pressure-pass.log 2>&1
  echo "pressure pass exit $? after ${SECONDS}s" >> /tmp/oos/pressure-pass.log
  dirs=(); for j in $JOBS; do [ -d "/tmp/oos/p/$j" ] && dirs+=("/tmp/oos/p/$j"); done
  .gpu/set/fikit-sim pressure "${dirs[@]}" -o /tmp/oos/pressure.json > /tmp/oos/pressure.txt 2>&1
  echo "fikit-sim pressure exit $?" >> /tmp/oos/pressure.txt
  cp /tmp/oos/pressure.json /tmp/oos/pressure.txt /tmp/oos/pressure-pass.log "$OUT/" 2>/dev/null
  cat /tmp/oos/pressure.txt /tmp/oos/pressure-pass.log
fi
left=$(( DEADLINE - SECONDS ))
RUN_ARGS='--policy exclusive,mps --repetitions 3 --profiles 1' QUIET=1 \
  lab/validate/set-call.sh .gpu/set lab/validate/real-set.json /tmp/oos/s "$OUT/pack-$TAG" "$left" \
  bertb1-r50b128,vitb1-r50b128,gpt2dec-r50b128,r50b1serve-r50b128,mobb1-r50t32,bertb8-bertt32
ls -la "$OUT"

# ---- device.txt: the device, as recorded ----
#   2026-11-26T17:26:43Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-26T17:35:47Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-26T17:45:16Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
