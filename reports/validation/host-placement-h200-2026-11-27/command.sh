#!/usr/bin/env bash
# reports/validation/host-placement-h200-2026-11-27/: the command record of this round, as committed with it
# (call.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.txt ----
# The device call (NVIDIA H200, 2026-11-27 00:05 UTC), from the repository root at af5c6cc:
ROUNDS=12 DEADLINE=480 CPU_MAP=0 CONDITIONS="alone mps mps-nap spin" bash lab/validate/host-placement.sh lab/validate/real-set.json mobb1 r50t32 $OUT/hp

# ---- device.txt: the device, as recorded ----
#   2026-11-27T00:05:56Z
#   NVIDIA H200, 580.159.04
