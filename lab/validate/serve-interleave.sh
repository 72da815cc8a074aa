#!/usr/bin/env bash
# One device call on a 2-GPU machine (issue 47, lab log 2026-11-28):
#   GPU 0, the first half of the CPUs: lab/validate/serve-interleave.py,
#     4 unpinned processes a model (resnet50, mobilenet_v3_large,
#     bert-base; the models interleaved) then 1 pinned to one CPU a model;
#     its JSON lines to $OUT/interleave.jsonl;
#   GPU 1, the second half: fikit-profile (default characterization) of
#     three serving commands of lab/validate/serve-47.json as served (open
#     loop: r50s50, mobs50, berts40), the traces as $OUT/open-profiles.tar.xz.
#
#   lab/validate/serve-interleave.sh BIN_ARCHIVE WORK
# From the repository root.
set -u
ARCHIVE=${1:?usage: serve-interleave.sh BIN_ARCHIVE WORK}
WORK=${2:?work folder}
OUTDIR=${OUT:-/tmp/serve-interleave-out}
mkdir -p "$WORK/bin" "$WORK/open" "$OUTDIR"
tar -C "$WORK/bin" -xJf "$ARCHIVE" || exit 2
n=$(nproc)
half=$((n / 2))
lo="0-$((half - 1))"
hi="$half-$((n - 1))"
{
  nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv
  lscpu | grep -E 'Model name|^CPU\(s\)'
} > "$OUTDIR/device.txt" 2>&1

(
  export CUDA_VISIBLE_DEVICES=0
  for i in 0 1 2 3; do
    for m in resnet50 mobilenet_v3_large bert-base; do
      taskset -c "$lo" python3 lab/validate/serve-interleave.py --model "$m" --index "$i" \
        >> "$OUTDIR/interleave.jsonl" 2>> "$OUTDIR/interleave.err"
    done
  done
  for m in resnet50 mobilenet_v3_large bert-base; do
    taskset -c 2 python3 lab/validate/serve-interleave.py --model "$m" --index 4 \
      >> "$OUTDIR/interleave.jsonl" 2>> "$OUTDIR/interleave.err"
  done
) &
probe=$!

(
  export CUDA_VISIBLE_DEVICES=1
  for j in r50s50 mobs50 berts40; do
    mapfile -t cmd < <(python3 -c "import json,sys; print('\n'.join(json.load(open('lab/validate/serve-47.json'))['jobs'][sys.argv[1]]['command']))" "$j")
    taskset -c "$hi" "$WORK/bin/fikit-profile" -n "$j" -p high -o "$WORK/open" -- "${cmd[@]}" \
      >> "$OUTDIR/profile.txt" 2>&1
    tar -C "$WORK/open" -cf - . | xz -T2 > "$OUTDIR/open-profiles.tar.xz"
  done
) &
prof=$!
wait $probe $prof
ls -la "$WORK/open" >> "$OUTDIR/profile.txt"
