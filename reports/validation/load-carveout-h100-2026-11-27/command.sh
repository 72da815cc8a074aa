#!/usr/bin/env bash
# reports/validation/load-carveout-h100-2026-11-27/: the command record of this round, as committed with it
# (call.txt, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.txt ----
# The device call (NVIDIA H100 80GB HBM3, 2026-11-27 01:20 UTC), from the repository root at 6c98ebf;
# .gpu/sens/bin.tar.xz: fikit-profile, fikit-sim and libfikit_collector.so built at 6c98ebf (carried).
mkdir -p /tmp/b && tar xJf .gpu/sens/bin.tar.xz -C /tmp/b && chmod +x /tmp/b/*
timeout 200 bash lab/validate/sensitivity.sh /tmp/b lab/validate/real-set.json /tmp/s1 0.5 r50b1 r50b8
LOAD_ARGS="--carveout 100" timeout 200 bash lab/validate/sensitivity.sh /tmp/b lab/validate/real-set.json /tmp/s2 0.5 r50b1 r50b8
# The traces (about 13 MB, not committed) came back as OUT/{alone,default,carveout100}-JOB.parquet (alone: /tmp/s1's); then, here:
/tmp/hs/bin/python lab/analysis/load-waits.py alone-r50b1.parquet default-r50b1.parquet alone-r50b1.parquet carveout100-r50b1.parquet alone-r50b8.parquet default-r50b8.parquet alone-r50b8.parquet carveout100-r50b8.parquet > load-waits.txt

# ---- device.txt: the device, as recorded ----
#   2026-11-27T01:20:30Z
#   NVIDIA H100 80GB HBM3, 580.159.04
#   default exit 0
#   carveout-100 exit 0
#   == 2026-11-27T01:20:30Z NVIDIA H100 80GB HBM3, 580.159.04 share 0.5 kind memory 
#   r50b1 alone: exit 0, 14 s
#   fikit-sim load: 528 blocks (0.500 of the block slots) on NVIDIA H100 80GB HBM3, 1924 kernels of 20 ms
#   r50b1 beside the load: exit 0, 38 s; load exit 0
#   r50b8 alone: exit 0, 13 s
#   fikit-sim load: 528 blocks (0.500 of the block slots) on NVIDIA H100 80GB HBM3, 1566 kernels of 20 ms
#   r50b8 beside the load: exit 0, 30 s; load exit 0
#   == 2026-11-27T01:22:11Z NVIDIA H100 80GB HBM3, 580.159.04 share 0.5 kind memory --carveout 100
#   r50b1 alone: exit 0, 11 s
#   fikit-sim load: 528 blocks (0.500 of the block slots) on NVIDIA H100 80GB HBM3, 1424 kernels of 20 ms
#   r50b1 beside the load: exit 0, 27 s; load exit 0
#   r50b8 alone: exit 0, 12 s
#   fikit-sim load: 528 blocks (0.500 of the block slots) on NVIDIA H100 80GB HBM3, 1342 kernels of 20 ms
#   r50b8 beside the load: exit 0, 25 s; load exit 0
#   {"carveout":100,"gpu":"NVIDIA H100 80GB HBM3","load":{"blocks":528,"demand":0.5,"kernels":1424},"sm_count":132}
