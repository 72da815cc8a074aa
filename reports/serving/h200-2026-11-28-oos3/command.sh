#!/usr/bin/env bash
# reports/serving/h200-2026-11-28-oos3: from the repository root, release
# binaries of 07d94e9 in .gpu/carry/rel.tar.xz, one 1-GPU H200 machine.
# Calls 1 and 2 (deadline 530 s each) named every pair: fikit-run set
# profiled the named pairs' jobs first and ran out of time before a round.
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
  lab/validate/serve-oos3.json /tmp/s3 c1 530 \
  mobs80-efft64,berts70q64-vitt16,vits60-gpt2t8,r50b2s40-efft64,gpt2s30q128-vitt16p5-efft64,mobs80-gpt2t8p5-vitt16
# (c2: the same, resumed on the warm machine.) Call 3, the first pair only:
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
  lab/validate/serve-oos3.json /tmp/s3 c3 540 mobs80-efft64
# Here, with the three calls' packs unpacked into DIR/g0 (tar -xJf raw.tar.xz
# gives its folder without the Parquet profiles):
SERVE_SET=lab/validate/serve-oos3.json lab/analysis/serve47.py DIR/g0 > summary.txt
