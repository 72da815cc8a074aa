#!/usr/bin/env bash
# Runs every profiler fault script (scripts/faults/*.sh) on a GPU machine and
# writes OUTDIR/summary.txt (one line per fault: PASS/FAIL/SKIP and the facts
# checked) and OUTDIR/<fault>.log (everything each printed; its files under
# OUTDIR/<fault>/).
#
#   scripts/faults/run-all.sh FIKIT_PROFILE_BIN COLLECTOR_SO OUTDIR [FIKIT_SIM_BIN]
#
# FIKIT_SIM_BIN (the traces are checked with `fikit-sim inspect --format
# json`) defaults to $FIKIT_SIM_BIN, then fikit-sim beside fikit-profile.
# PYTHON: python3 with torch and a CUDA GPU (default python3). Run as root to
# include the read-only and full tmpfs cases. About 2-3 minutes.
set -u
if [ $# -lt 3 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
HERE="$(cd "$(dirname "$0")" && pwd)"
abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
export FIKIT_PROFILE="$(abs "$1")"
export FIKIT_COLLECTOR="$(abs "$2")"
OUT="$3"
sim="${4:-${FIKIT_SIM_BIN:-$(dirname "$FIKIT_PROFILE")/fikit-sim}}"
export FIKIT_SIM="$(abs "$sim")"
export PYTHON="${PYTHON:-python3}"
for f in "$FIKIT_PROFILE" "$FIKIT_SIM"; do
    [ -x "$f" ] || { echo "run-all: $f is not an executable" >&2; exit 2; }
done
[ -f "$FIKIT_COLLECTOR" ] || { echo "run-all: $FIKIT_COLLECTOR is missing" >&2; exit 2; }
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
summary="$OUT/summary.txt"
{
    echo "# fikit profiler faults, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), uid $(id -u)"
    echo "# $("$FIKIT_PROFILE" --version 2>&1); $("$FIKIT_SIM" --version 2>&1)"
    echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    echo "# $("$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1)"
} >"$summary"
fail=0
for fault in sigkill sigint dataloader two-procs unwritable full; do
    rm -rf "${OUT:?}/$fault"
    start=$SECONDS
    WORK="$OUT/$fault" timeout -k 10 240 bash "$HERE/$fault.sh" >"$OUT/$fault.log" 2>&1
    rc=$?
    line=$(grep -E '^(PASS|FAIL|SKIP) ' "$OUT/$fault.log" | tail -1)
    if [ -z "$line" ]; then
        line="FAIL $fault: ended with status $rc without a result (timed out after 240 s if 124); see $fault.log"
    fi
    case "$line" in FAIL*) fail=1 ;; esac
    echo "$line [$((SECONDS - start)) s]" | tee -a "$summary"
done
echo "summary: $summary"
exit "$fail"
