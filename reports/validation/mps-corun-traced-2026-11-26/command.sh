#!/usr/bin/env bash
# reports/validation/mps-corun-traced-2026-11-26/: the command record of this round, as committed with it
# (device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- device.txt: the device, as recorded ----
#   NVIDIA H200, 580.159.04
#   2026-11-26T03:01:06Z
