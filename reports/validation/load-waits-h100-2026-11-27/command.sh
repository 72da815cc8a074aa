#!/usr/bin/env bash
# reports/validation/load-waits-h100-2026-11-27/: the command record of this round, as committed with it
# (call.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.txt ----
# The device call (NVIDIA H100 80GB HBM3, 2026-11-27 01:01 UTC), from the repository root at d05edf1;
# .gpu/sens/bin.tar.xz: fikit-profile, fikit-sim and libfikit_collector.so built at d05edf1 (carried).
mkdir -p /tmp/b && tar xJf .gpu/sens/bin.tar.xz -C /tmp/b && chmod +x /tmp/b/*
timeout 300 bash lab/validate/sensitivity.sh /tmp/b lab/validate/real-set.json /tmp/s 0.5 r50b1 r50b8
# The four traces (about 9 MB, not committed) came back as OUT/{alone,beside}-JOB-PID.parquet; then, here:
/tmp/hs/bin/python lab/analysis/load-waits.py OUT/alone-r50b1-569.parquet OUT/beside-r50b1-632.parquet OUT/alone-r50b8-692.parquet OUT/beside-r50b8-745.parquet > load-waits.txt

# ---- device.txt: the device, as recorded ----
#   2026-11-27T01:01:26Z
#   NVIDIA H100 80GB HBM3, 580.159.04
