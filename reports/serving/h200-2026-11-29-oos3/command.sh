#!/usr/bin/env bash
# reports/serving/h200-2026-11-29-oos3: from the repository root, release
# binaries of 33c5397 in .gpu/carry/rel.tar.xz (model and gate as judged:
# 07d94e9's hold with 802dc12's and 88d5882's fixes), one 1-GPU H200
# machine, one pair a sitting; each pair took two calls (the second resumed
# the warm machine's /tmp/s3).
for tag in d1 d2; do
  QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
    lab/validate/serve-oos3.json /tmp/s3 $tag 540 r50b2s40-efft64
done
for tag in e1 e2; do
  QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
    lab/validate/serve-oos3.json /tmp/s3 $tag 540 berts70q64-vitt16
done
# Here, the last pack unpacked as DIR/g1 and the 2026-11-28 sitting
# (reports/serving/h200-2026-11-28-oos3, mobs80-efft64) as DIR/g0:
SERVE_SET=lab/validate/serve-oos3.json lab/analysis/serve47.py DIR/g0 DIR/g1 > summary.txt
# Pair 3 (vits60-gpt2t8), a fresh 1-GPU H200 on 2026-11-29 14:26Z, the same
# binaries (rebuilt from 33c5397, stripped, xz -9e), two calls:
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
  lab/validate/serve-oos3.json /tmp/s3 f1 530 vits60-gpt2t8
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
  lab/validate/serve-oos3.json /tmp/s3 f2 490 vits60-gpt2t8
# summary.txt now reads the four pairs: the 2026-11-28 sitting as DIR/a/g0,
# raw.tar.xz unpacked as DIR/b, raw-vits60.tar.xz as DIR/c (its g0):
#   SERVE_SET=lab/validate/serve-oos3.json lab/analysis/serve47.py DIR/a/g0 DIR/b DIR/c/g0
# resimulated-0b69e89-vits60.txt: pair 3 predicted by 0b69e89's model, from
# the sitting's own profiles (in the call's pack; Parquet, not kept here):
#   fikit-run summary --resimulate lab/validate/serve-oos3.json -o DIR/c/g0
# The two three-job scenarios, 2026-11-30 00:22Z-00:39Z, one fresh 2-GPU
# H200 (one scenario a GPU with its 16 local CPUs), the same binaries
# (33c5397's, from .gpu/c2/bins.tar.xz unpacked as /tmp/b), two calls (the
# second resumed the warm machine's /tmp/s3):
for tag in s3a s3b; do
  NOPACK='*/profiles/*.parquet' QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh \
    /tmp/b/33c5397 lab/validate/serve-oos3.json /tmp/s3 $tag 520 gpt2s30q128-vitt16p5-efft64 mobs80-gpt2t8p5-vitt16
done
# summary.txt now reads all six: as above, with raw-three-job.tar.xz
# unpacked as DIR/d (its s3/g0 and s3/g1):
#   SERVE_SET=lab/validate/serve-oos3.json lab/analysis/serve47.py DIR/a/g0 DIR/b DIR/c/g0 DIR/d/s3/g0 DIR/d/s3/g1
