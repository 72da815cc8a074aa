#!/usr/bin/env bash
# reports/validation/pressure-sensitivity-h100-2026-11-26/: the command record of this round, as committed with it
# (device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- device.txt: the device, as recorded ----
#   Device: NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-26, four machines
#   (asked as nvidia-h100-x1). Binaries: fikit-profile and libfikit_collector.so
#   of 705836d (the validation set's profiles), fikit-sim built from the working
#   tree of this change (fikit-sim load). Every run under MPS, a daemon of the
#   script's own. The traces (about 150 MB) are not committed.
#
#   14:48 UTC  lab/validate/sensitivity.sh (the memory load; KIND came later, memory by default) BIN lab/validate/real-set.json /tmp/sens 0.5 \
#                bertb1 vitb1 gpt2dec r50b1serve mobb1 bertb8 r50b128 bertt32 r50t32 r50b1 r50b8
#              (cut by the call's deadline after r50t32; its run alone was interrupted)
#   14:59 UTC  the same, /tmp/sens2, r50t32 r50b1 r50b8
#   15:08 UTC  lab/validate/pressure.sh BIN lab/validate/real-set.json /tmp/pres \
#                r50b128 bertt32 r50t32 bertb1 vitb1 gpt2dec r50b1serve mobb1 bertb8 r50b1 r50b8
#   15:17 UTC  KIND=compute lab/validate/pressure.sh ... /tmp/presc (the same jobs)
#   15:21 UTC  KIND=compute lab/validate/sensitivity.sh ... /tmp/sensc 0.125 vitb1 bertb1 r50b1 r50b8 gpt2dec
#              (cut by the deadline during mobb1)
#   15:30 UTC  a third H100 machine (asked as nvidia-h200; an H100 came): pressure.sh, then
#              KIND=compute pressure.sh, /tmp/p2m and /tmp/p2c, r50b128 bertt32 r50t32
#   15:55 UTC  a fourth machine: PASSES=1 pressure.sh (the chase, one pass: 41 us a run) /tmp/ps1,
#              bertb1 vitb1 r50b1 r50b8 bertb8 gpt2dec r50b128 r50b1serve mobb1; then
#              KIND=compute PASSES=20 pressure.sh (46 us a run) /tmp/ps2, the same less r50b1serve and
#              mobb1. The traces (290 MB) were cut on the machine to the columns pressure.py reads
#              (kernel rows; times, launch shapes; the file's fikit.* metadata) before they came back.
#
#   The load held 528 blocks of 256 threads at share 0.5 (4 an SM of 132 SMs;
#   load-*.json); the compute load at 0.125, one block an SM.
#
#   Files here (no GPU needed to read them; lab/analysis/pressure.py is at 443dff5, its fit
#   now `fikit-sim pressure`):
#     sensitivity-memory-0.5.txt     lab/analysis/sensitivity.py ALONE BESIDE 0.5 --top 5, per job
#     sensitivity-compute-0.125.txt  the same beside the compute load, 0.125
#     pressure-memory.txt            lab/analysis/pressure.py JOB VICTIM 2.67 (the pointer-chasing victim)
#     pressure-compute.txt           lab/analysis/pressure.py JOB VICTIM (the compute victim)
#     pressure-{memory,compute}-2.txt the partners again on the third machine
#     pressure-short-victim.txt      pressure.py with the short victims (ps1: chase, ps2: compute)
#     traced-pairs.txt               sensitivity.py ... --traced SMALL_CORUN PARTNER_CORUN on the
#                                    in-sample traced H100 MPS co-runs of 2026-11-26
#                                    (validation/mps-corun-traced-h100-2026-11-26b/, run mps-1)
