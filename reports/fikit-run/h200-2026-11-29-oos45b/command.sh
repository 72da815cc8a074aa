#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-29-oos45b/: issue 45's second out-of-sample
# set (lab/validate/oos-45b.json, its rule in its `about`), H200, all six
# pairs. Release binaries of 857171a (the model of 8b5e096 the set
# judges; 857171a is behaviour-identical), from the repository root:
#   cargo build --release -p fikit-run -p fikit-profile -p fikit-collector -p fikit-shim
#   tar -C target/release -cf - fikit-run fikit-profile libfikit_collector.so libfikit_shim.so | xz > BIN.tar.xz
# Each device call (one 1-GPU H200, driver 580.159.04), a new TAG each:
#   QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh BIN.tar.xz \
#     lab/validate/oos-45b.json /tmp/o45b TAG 540 PAIR
# c1 r18b1-cnxt32 (machine 1, 2026-11-29T04:30Z, profiled first); c2 and c3
# cnxb1-r101b32 (machine 2, 04:41Z and 04:51Z: c2 stopped at its deadline
# after 9 rounds, c3 resumed); c4 shfb1-bertt8 (04:53Z) was killed at the
# session's device limit before it packed, its 5 rounds lost. Later that day:
# s3a shfb1-bertt8 (machine 3, 06:38Z, 8 rounds; the machine was given back
# before the next call, so they are kept apart as extra-s3a/); s3b the same
# pair from its start (machine 4, 06:51Z, 9 rounds); s3c its rounds 10-12
# (machine 5, 07:02Z, WORK=.gpu/o45b carried in from s3b's pack, binaries
# stripped to fit the carry limit).
# Pairs 4-6 on 5af6ebc's binaries (the same predictions: README), stripped,
# on machine 6, a 2-GPU H200 host, the two GPUs side by side (gpus-call.sh
# pins each sitting to its own 16 CPUs):
#   x2a (09:28Z): PAIRS_GPU0=bertb4s32-efft32 PAIRS_GPU1=gpt2b2s64-r18t64
#   x2b (09:37Z): bertb4s32-efft32,dn121b1-gpt2t4s256 and gpt2b2s64-r18t64
#   x2c (09:46Z): dn121b1-gpt2t4s256
#   QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh BIN.tar.xz \
#     lab/validate/oos-45b.json /tmp/o45b TAG 520 PAIRS_GPU0 [PAIRS_GPU1]
# Each pair's jobs are profiled (fikit-profile's default characterization)
# just before its rounds on the same machine. The summary of the six
# pairs, run on this machine over the calls' folders merged (nothing
# resimulated: the simulated columns are the device's):
#   fikit-run summary lab/validate/oos-45b.json -o MERGED
