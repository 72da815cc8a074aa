#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-29-oos45c/: issue 45's third out-of-sample
# set (lab/validate/oos-45c.json, its rule in its `about`), H200, pairs 1-4.
# Release binaries of ecfac05 (the model the set judges, lab log), from a
# checkout of ecfac05:
#   cargo build --release -p fikit-run -p fikit-profile -p fikit-collector -p fikit-shim
#   (cd target/release && strip fikit-run fikit-profile && tar cf - fikit-run fikit-profile \
#     libfikit_collector.so libfikit_shim.so) | xz -9e > BIN.tar.xz
# One fresh 4-GPU H200 host (driver 580.159.04), one pair a GPU, each sitting
# pinned to its GPU's 16 local CPUs; three calls, TAG c4a (19:21Z), c4b
# (19:30Z), c4c (19:39Z), the later two resuming the warm machine's /tmp/o45c:
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh BIN.tar.xz \
  lab/validate/oos-45c.json /tmp/o45c TAG 520 rgb1-swt16 swb1-dnt32 r101b1-vitb32 mobb2-rgt64
# The summary, here, over the four sittings' pair folders and profile logs
# merged into one folder M (nothing resimulated: the simulated columns are
# the device's):
#   fikit-run summary lab/validate/oos-45c.json -o M
# The Parquet profiles are in commit 94f70e3, not in the tree:
#   git show 94f70e3:lab/held/oos-45c/profiles-PAIR.tar > PAIR.tar
