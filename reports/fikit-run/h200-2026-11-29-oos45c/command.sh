#!/usr/bin/env bash
# reports/fikit-run/h200-2026-11-29-oos45c/: issue 45's third out-of-sample
# set (lab/validate/oos-45c.json, its rule in its `about`), H200, all six
# pairs. Release binaries of ecfac05 (the model the set judges, lab log):
#   lab/validate/build-bins.sh BIN.tar.xz ecfac05   (then BIN = /tmp/b/ecfac05)
# Pairs 1-4: one fresh 4-GPU H200 host (driver 580.159.04), one pair a GPU,
# each sitting pinned to its GPU's 16 local CPUs; three calls, TAG c4a
# (19:21Z), c4b (19:30Z), c4c (19:39Z), the later two resuming the warm
# machine's /tmp/o45c (raw.tar.xz: o45c/g0-g3):
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh BIN \
  lab/validate/oos-45c.json /tmp/o45c TAG 520 rgb1-swt16 swb1-dnt32 r101b1-vitb32 mobb2-rgt64
# Pairs 5-6: one fresh 2-GPU H200 host (driver 580.159.04), likewise; TAG
# d2a (21:59Z), d2b (22:08Z), d2c (22:17Z); rounds 1-35 of 36, the ninth
# FIKIT repetition cut by the device budget (raw-pairs5-6.tar.xz: o45c-d2/g0-g1):
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh BIN \
  lab/validate/oos-45c.json /tmp/o45c TAG 520 bertb1s256-r101t16 gpt2b1s32-cnxb64
# The summary, here, over the six sittings' pair folders and profile logs
# merged into one folder M (nothing resimulated: the simulated columns are
# the device's):
#   mkdir -p M/profiles; for g in o45c/g* o45c-d2/g*; do cp -r $g/*-* M/; cp $g/profiles/*.log M/profiles/; done
#   BIN/fikit-run summary lab/validate/oos-45c.json -o M
# The rule over all twelve rows a policy (the summary's own fits leave out
# pairs 5-6, one round short), and what is reported beside it:
#   python3 lab/analysis/set-rule.py M/summary.json > rule.txt
#   python3 lab/analysis/repeatability.py M/summary.json; python3 lab/analysis/lc-bias.py M/summary.json
# The Parquet profiles are not in the tree: pairs 1-4 in commit 94f70e3,
# pairs 5-6 in a9de6e3:
#   git show COMMIT:lab/held/oos-45c/profiles-PAIR.tar > PAIR.tar
