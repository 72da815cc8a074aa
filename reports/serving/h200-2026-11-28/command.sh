#!/usr/bin/env bash
# reports/serving/h200-2026-11-28: the device calls, from the repository
# root, release binaries (fikit-run, fikit-profile, collector, shim) in
# .gpu/carry/rel.tar.xz; QUIET=1 RUN_ARGS="--round-timeout-s 180".
# Machine A (binaries of d1645bf):
lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz lab/validate/serve-47.json /tmp/s47 c1 525 \
  r50s50-r50t32 r50s120-bertt32 mobs50-bertt32 mobs120-r50t32
# Machine B (binaries of 3a3a8ee):
lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz lab/validate/serve-47.json /tmp/s47b c2 540 \
  berts40-r50t32 berts100-bertt32 "r50s120-bertt32@--policy exclusive,mps" "mobs120-r50t32@--policy exclusive,mps"
# A third machine, B's g0 and g1 folders carried into /tmp/s47b (the two
# bert pairs resumed where B's deadline stopped them):
lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz lab/validate/serve-47.json /tmp/s47b c3 330 \
  berts40-r50t32 berts100-bertt32
# Here: tar -xJf raw.tar.xz -C DIR, then
lab/analysis/serve47.py DIR/machine-a/g{0,1,2,3} DIR/machine-b/g{0,1,2,3} > summary.txt
