#!/usr/bin/env bash
# reports/serving/h200-2026-11-28-open: from the repository root, release
# binaries of f133f48 in .gpu/carry/rel.tar.xz, serve-47's r50t32 and
# bertt32 profiles (and logs) in .gpu/carry/pool/.
mkdir -p /tmp/so/pool && cp .gpu/carry/pool/* /tmp/so/pool/
QUIET=1 RUN_ARGS="--round-timeout-s 150" lab/validate/gpus-call.sh .gpu/carry/rel.tar.xz \
  lab/validate/serve-open.json /tmp/so so1 540 effs60-r50t32 effs120-bertt32 vits40-bertt32 gpt2s50-r50t32
# The same again on the warm machine (so2, deadline 400): the two pairs the
# deadline stopped finished their last rounds.
# Here: tar -xJf raw.tar.xz -C DIR, then
SERVE_SET=lab/validate/serve-open.json lab/analysis/serve47.py DIR/so/g{0,1,2,3} > summary.txt
# After the busy-fit fix, each sitting with the partners' profiles copied in:
#   fikit-run summary lab/validate/serve-open.json -o DIR/re/gN --resimulate
SERVE_SET=lab/validate/serve-open.json lab/analysis/serve47.py DIR/re/g{0,1,2,3} > resimulated.txt
# With 9017581 (the runs' spread), the same in DIR/re2/gN:
SERVE_SET=lab/validate/serve-open.json lab/analysis/serve47.py DIR/re2/g{0,1,2,3} > resimulated-spread.txt
