#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-28-oos45/: issue 45's out-of-sample set
# (lab/validate/oos-45.json, rule in the lab log 2026-11-27), H200, five of
# its six pairs (effb1-vitt16 not yet run). Release binaries of 5951004
# (fikit-run, fikit-profile, collector, shim) in BIN, from the repository root.
#
# The twelve characterizations: one fresh machine, 2026-11-28 09:48-10:17
# (fikit-profile of 8f60a62, unchanged since), three calls of
#   QUIET=1 lab/validate/set-call.sh BIN lab/validate/oos-45.json /tmp/oos/s PACK 540
# (first-sitting/ in raw.tar.xz). The profiles (42 MB of Parquet) are not in
# the repository (the device's 64 MiB limit on what travels); their logs are
# (profiles/*.log).
#
# The rounds: each pair's two profiles carried into its call (xz; since
# then lab/validate/pack-pair-profiles.sh and set-call.sh's PROFILES do
# this) and put in /tmp/oos/s/profiles/, then
#   QUIET=1 lab/validate/set-call.sh BIN lab/validate/oos-45.json /tmp/oos/s PACK 540 PAIR
# for PAIR gpt2b1-r50b64 (machine 1, 2026-11-28T12:59Z), then
# bertb2s64-effb64 (13:08Z), mobb4-gpt2t8 (13:13Z), r50b2-bertt16s64 (13:18Z),
# vitb4-mobt64 (13:24Z) on machine 2; NVIDIA H200, driver 580.159.04.
#
# Here, the summary over the five pairs (the prediction rebuilt from the
# profiles with the model of 5951004; every pair table identical to the
# device's):
#   tar -xJf raw.tar.xz -C OUT; cp PROFILES/*.parquet OUT/profiles/
fikit-run summary lab/validate/oos-45.json -o OUT --resimulate
