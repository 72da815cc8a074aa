#!/usr/bin/env bash
# Live-replay fidelity on one GPU (issue 5), in one go; about 5 minutes on an
# H200. Needs the GPU, the CUDA driver and libnvrtc (LD_LIBRARY_PATH), and
# python3 for the timeline analysis.
#
#   lab/validate/validate-live.sh FIKIT_LAB MODEL_JSON OUT_DIR [--measure-handover-into NEW_MODEL_JSON]
#
# 1. Every shipped trace replayed alone (exclusive): OUT/exclusive.json.
# 2. Per-kernel timelines (FIKIT_LIVE_TIMELINE) of live preemptive runs of the
#    validation and holdout scenarios, and the median hand-over between the
#    jobs' contexts (lab/analysis/timelines.py): OUT/handover.json. With
#    --measure-handover-into, MODEL_JSON with `context_handover_ns` set to that
#    median is written to NEW_MODEL_JSON and used for step 3.
# 3. `fikit-lab validate` on simulator/scenarios/{validation,holdout,holdout2}
#    with the model: OUT/<set>/validation.{md,json}, OUT/<set>.md.
set -uo pipefail
LAB="$1"; MODEL="$2"; OUT="$3"; shift 3
NEW_MODEL=""
if [ "${1:-}" = "--measure-handover-into" ]; then NEW_MODEL="$2"; fi
mkdir -p "$OUT"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

start=$(date +%s)
"$LAB" live --policy exclusive --format json traces/h200 >"$OUT/exclusive.json" 2>"$OUT/exclusive.err"
echo "exclusive rc=$? $(( $(date +%s) - start )) s"

tl="$OUT/timelines"; mkdir -p "$tl"
for f in lab/scenarios/validation/*.json lab/scenarios/holdout/*.json; do
    n=$(basename "$(dirname "$f")")-$(basename "$f" .json)
    FIKIT_LIVE_TIMELINE="$tl/$n" "$LAB" live --policy preemptive --format json --scenario "$f" \
        >"$tl/$n.json" 2>"$tl/$n.err" || echo "timeline run $n failed: rc=$?"
done
python3 lab/analysis/timelines.py --json "$OUT/handover.json" "$tl"/*/ >"$OUT/handover.log"
tail -1 "$OUT/handover.log"
if [ -n "$NEW_MODEL" ]; then
    python3 - "$MODEL" "$OUT/handover.json" "$NEW_MODEL" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); h = json.load(open(sys.argv[2]))["total"]
m["context_handover_ns"] = h["handover_median_ns"]
q = h["handover_quartiles_ns"]
m["source"] += (f"; context_handover_ns: median of {h['handovers']:,} hand-overs between the two jobs' "
                f"kernels in live preemptive replays of the 10 validation and holdout scenarios with "
                f"per-kernel timelines (lab/validate/validate-live.sh; quartiles {q[0]/1e3:.1f}-{q[2]/1e3:.1f} us)")
json.dump(m, open(sys.argv[3], "w"), indent=2); open(sys.argv[3], "a").write("\n")
PY
    MODEL="$NEW_MODEL"
fi

for set in validation holdout holdout2; do
    start=$(date +%s)
    "$LAB" validate --model "$MODEL" --out "$OUT/$set" simulator/scenarios/$set/*.json \
        >"$OUT/$set.md" 2>"$OUT/$set.err"
    echo "validate $set rc=$? $(( $(date +%s) - start )) s"
    sed -n 5,11p "$OUT/$set.md"
done
