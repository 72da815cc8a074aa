#!/usr/bin/env bash
# Device calls on a 2-GPU machine (issue 47, lab log 2026-11-28), each GPU
# with its own half of the CPUs:
#   probe: lab/validate/serve-interleave.py, 4 unpinned processes a model
#     (resnet50, mobilenet_v3_large, bert-base; the models interleaved),
#     indices 0-1 on GPU 0 and 2-3 on GPU 1, then 1 pinned to one CPU a
#     model on GPU 1; the JSON lines to $OUT/interleave.jsonl;
#   profiles: fikit-profile (default characterization) on GPU 1 of three
#     serving commands of lab/validate/serve-47.json as served (open loop:
#     r50s50, mobs50, berts40), the traces as $OUT/open-profiles.tar.xz.
#
#   lab/validate/serve-interleave.sh probe
#   lab/validate/serve-interleave.sh profiles BIN_ARCHIVE WORK
# From the repository root.
set -u
MODE=${1:?usage: serve-interleave.sh probe | profiles BIN_ARCHIVE WORK}
OUTDIR=${OUT:-/tmp/serve-interleave-out}
mkdir -p "$OUTDIR"
n=$(nproc)
half=$((n / 2))
lo="0-$((half - 1))"
hi="$half-$((n - 1))"
{
  nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv
  lscpu | grep -E 'Model name|^CPU\(s\)'
} > "$OUTDIR/device.txt" 2>&1

probe() { # GPU CPUS INDEX...
  local g=$1 c=$2
  shift 2
  for i in "$@"; do
    for m in resnet50 mobilenet_v3_large bert-base; do
      CUDA_VISIBLE_DEVICES=$g taskset -c "$c" python3 lab/validate/serve-interleave.py --model "$m" --index "$i" \
        >> "$OUTDIR/interleave-$g.jsonl" 2>> "$OUTDIR/interleave.err"
    done
  done
}

case "$MODE" in
  probe)
    probe 0 "$lo" 0 1 &
    (probe 1 "$hi" 2 3; probe 1 "$((half + 2))" 4) &
    wait
    cat "$OUTDIR"/interleave-*.jsonl > "$OUTDIR/interleave.jsonl"
    rm -f "$OUTDIR"/interleave-*.jsonl
    ;;
  profiles)
    ARCHIVE=${2:?bin archive}
    WORK=${3:?work folder}
    mkdir -p "$WORK/bin" "$WORK/open"
    tar -C "$WORK/bin" -xJf "$ARCHIVE" || exit 2
    export CUDA_VISIBLE_DEVICES=1
    for j in r50s50 mobs50 berts40; do
      mapfile -t cmd < <(python3 -c "import json,sys; print('\n'.join(json.load(open('lab/validate/serve-47.json'))['jobs'][sys.argv[1]]['command']))" "$j")
      taskset -c "$hi" "$WORK/bin/fikit-profile" -n "$j" -p high -o "$WORK/open" -- "${cmd[@]}" \
        >> "$OUTDIR/profile.txt" 2>&1
    done
    tar -C "$WORK/open" -cf - . | xz -T2 > "$OUTDIR/open-profiles.tar.xz"
    ;;
  *) echo "serve-interleave.sh: unknown mode $MODE" >&2; exit 2 ;;
esac
