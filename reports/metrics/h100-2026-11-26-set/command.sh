#!/usr/bin/env bash
# reports/metrics/h100-2026-11-26-set/: the command record of this round, as committed with it
# (device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.
# The call: ../h200-2026-11-26-set/command.sh (its call.sh), before its ALL_JOBS block was added.

# ---- device.txt: the device, as recorded ----
#   NVIDIA H100 80GB HBM3, 580.159.04
#   2026-11-26T07:24:45Z
#   79c2fad
#   command: bash .gpu/cal2/call.sh (../h200-2026-11-26-set/call.sh, before its ALL_JOBS block was added)
