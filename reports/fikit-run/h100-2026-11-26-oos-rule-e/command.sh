#!/usr/bin/env bash
# reports/fikit-run/h100-2026-11-26-oos-rule-e/: the command record of this round, as committed with it
# (calls.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- calls.txt ----
# The three device calls of this round (binaries of 787ea94), from the repository root:
bash lab/validate/oos-round.sh .gpu/oos/bin.tar.xz a 530
bash lab/validate/oos-round.sh .gpu/oos/bin.tar.xz b 565
bash lab/validate/oos-round.sh .gpu/oos/bin.tar.xz c 495

# ---- device.txt: the device, as recorded ----
#   2026-11-26T22:02:04Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-26T22:11:12Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-26T22:20:47Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
