#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-29-host-corun/: issue 45's host-in-co-runs
# test (lab/validate/host-corun.json; its design: lab log 2026-11-28, "The
# host in co-runs: the design, stated before it runs"), H200, 8 of its 9
# pairs. Release binaries of 5b19282, stripped, from the repository root:
#   cargo build --release -p fikit-run -p fikit-profile -p fikit-collector -p fikit-shim
#   (cd target/release && strip ... && tar -cf - fikit-run fikit-profile \
#     libfikit_collector.so libfikit_shim.so) | xz -9e > .gpu/carry/rel-head.tar.xz
# Three calls on one warm 1-GPU H200 (driver 580.159.04), 12:02Z, 12:10Z
# and 12:18Z, TAG hc1, hc2, hc3, DEADLINE 470, 470 and 530; each resumed
# where the last stopped (the pair cut at a deadline runs again whole):
#   QUIET=1 RUN_ARGS='--round-timeout-s 150 --trace {DIR}/traces' NOPACK='*/traces' \
#     POST='for d in $SITTINGS; do python3 lab/analysis/host-corun.py --digest \
#       lab/validate/host-corun.json $d >$d/host-corun.txt 2>&1; done' \
#     lab/validate/gpus-call.sh .gpu/carry/rel-head.tar.xz lab/validate/host-corun.json \
#       /tmp/hc TAG DEADLINE r50b1-r50b128,r50b1-r50t32,r50b1-effb1,bertb1-r50b128,\
#       bertb1-r50t32,bertb1-effb1,mobb1-r50b128,mobb1-r50t32,mobb1-effb1
# host-corun.txt is the last call's reading (the digest then held every
# round's traces); raw.tar.xz holds the sitting's folder without traces or
# profiles (run.json, tables, logs, summary, host-corun-digest.json).
# Read again here from the digest alone:
#   tar -xJf raw.tar.xz && python3 lab/analysis/host-corun.py lab/validate/host-corun.json g0
