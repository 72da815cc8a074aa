#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-27-oos-rule-d/: the command record of this round, as committed with it
# (calls.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- calls.txt ----
# Round d of the rule of a113430 on the H200, all six out-of-sample pairs on one fresh machine (binaries of ce3864f), two calls, from the repository root:
PRESSURE_FROM=reports/fikit-run/h200-2026-11-26-oos-rule-b/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz d1 550
PRESSURE_FROM=reports/fikit-run/h200-2026-11-26-oos-rule-b/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz d2 495
# The first call stopped at its deadline inside vitb1-r50b128 (exit 124); the second resumed from the kept work folder.

# ---- device.txt: the device, as recorded ----
#   # call d1
#   2026-11-27T06:50:18Z
#   NVIDIA H200, 580.159.04, 1980 MHz, 700.00 W
#   # call d2 (same machine)
#   2026-11-27T06:59:42Z
#   NVIDIA H200, 580.159.04, 1980 MHz, 700.00 W
