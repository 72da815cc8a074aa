#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-27-oos-rule-c2/: the command record of this round, as committed with it
# (calls.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- calls.txt ----
# Round c of the rule of a113430 on the H200, the rest of it (five pairs) on one fresh machine (binaries of ce3864f), two calls, from the repository root:
ONLY_PAIRS=bertb1-r50b128,vitb1-r50b128,bertb8-bertt32,gpt2dec-r50b128,r50b1serve-r50b128 PRESSURE_FROM=reports/fikit-run/h200-2026-11-26-oos-rule-b/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz c2 550
ONLY_PAIRS=bertb1-r50b128,vitb1-r50b128,bertb8-bertt32,gpt2dec-r50b128,r50b1serve-r50b128 PRESSURE_FROM=reports/fikit-run/h200-2026-11-26-oos-rule-b/pressure/pressure.json bash lab/validate/oos-round.sh .gpu/busy/bin.tar.xz c3 550
# The first call stopped at its deadline inside bertb8-bertt32 (exit 124); the second resumed from the kept work folder.

# ---- device.txt: the device, as recorded ----
#   # call c2
#   2026-11-27T06:33:51Z
#   NVIDIA H200, 580.159.04, 1980 MHz, 700.00 W
#   # call c3 (same machine)
#   2026-11-27T06:43:14Z
#   NVIDIA H200, 580.159.04, 1980 MHz, 700.00 W
