#!/usr/bin/env bash
# reports/fikit-run/h100-2026-11-26-oos-rule-c/: the command record of this round, as committed with it
# (device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.
# The call: ../h100-2026-11-26-oos-rule-a/command.sh (the same call.sh, on a fresh machine).

# ---- device.txt: the device, as recorded ----
#   2026-11-26T18:14:27Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
#   2026-11-26T18:23:39Z
#   NVIDIA H100 80GB HBM3, 580.159.04, 1980 MHz, 700.00 W
