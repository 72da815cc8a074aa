#!/usr/bin/env bash
# reports/validation/gemm-pressure-h200-2026-11-27/: the command record of this round, as committed with it
# (call.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# Issue 15: the GEMM victim's pressure pass of the set's three busy partners
# on an H200, the GEMM weights of the busiest rule (validation log,
# 2026-11-27) for that GPU kind. One call; only the pass's log and
# `fikit-sim pressure`'s tables come back. Binaries: .gpu/busy/bin.tar.xz.
set -u
SECONDS=0
B=.gpu/b
mkdir -p $B && tar xJf .gpu/busy/bin.tar.xz -C $B && chmod +x $B/*
W=/tmp/gp
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader; date -u +%FT%TZ; } | tee $OUT/device.txt
KIND=gemm PASSES=1 timeout --signal=INT --kill-after=15 200 lab/validate/pressure.sh $B lab/validate/real-set.json $W r50b128 r50t32 bertt32 >$OUT/gemm-pass.log 2>&1
echo "pass exit $? at ${SECONDS}s" | tee -a $OUT/gemm-pass.log
$B/fikit-sim pressure $W/r50b128 $W/r50t32 $W/bertt32 -o $OUT/pressure-gemm.json >$OUT/pressure-gemm.txt 2>&1
echo "fikit-sim pressure exit $?" >>$OUT/pressure-gemm.txt
cat $OUT/pressure-gemm.txt

# ---- device.txt: the device, as recorded ----
#   NVIDIA H200, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-27T05:11:18Z
