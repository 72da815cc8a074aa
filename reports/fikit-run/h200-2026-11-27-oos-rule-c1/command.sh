#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-27-oos-rule-c1/: the command record of this round, as committed with it
# (calls.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- calls.txt ----
# Round c of the rule of a113430 on the H200, its first machine (binaries of 9f6414d), from the repository root:
ONLY_PAIRS=mobb1-r50t32 PRESSURE_FROM=reports/fikit-run/h200-2026-11-26-oos-rule-b/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz c1 250

# ---- device.txt: the device, as recorded ----
#   2026-11-27T05:17:09Z
#   NVIDIA H200, 580.159.04, 1980 MHz, 700.00 W
