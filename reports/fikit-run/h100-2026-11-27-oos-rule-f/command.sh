#!/usr/bin/env bash
# reports/fikit-run/h100-2026-11-27-oos-rule-f/: the command record of this round, as committed with it
# (calls.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- calls.txt ----
# The three device calls of this round on one H100 machine (binaries of 9f6414d), from the repository root,
# after the check of validation/busiest-insample-h100-2026-11-27 on the same machine:
PRESSURE_FROM=reports/fikit-run/h100-2026-11-26-oos-rule-e/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz a 550
PRESSURE_FROM=reports/fikit-run/h100-2026-11-26-oos-rule-e/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz b 370
ONLY_PAIRS=gpt2dec-r50b128,r50b1serve-r50b128 PRESSURE_FROM=reports/fikit-run/h100-2026-11-26-oos-rule-e/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz g 540
# (the third landed on the same machine, still held: it resumed this round's folder, /tmp/oos/s)

# ---- device.txt: the device, as recorded ----
#   2026-11-27T04:52:32Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-27T05:01:55Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-27T05:08:27Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
