# Sourced by lab/validate scripts that profile a job once for fikit-run's
# --job NAME:PRIORITY:PROFILE=COMMAND (gate-cost.sh, held-partner.sh,
# idle-context.sh), and the launch-bound top job two of them share.
# profile_once BIN_DIR NAME PRIORITY DEST LOG COMMAND: one traced run of
# COMMAND (split at spaces, as fikit-run's --job splits it) by BIN_DIR's
# fikit-profile --single-run, its trace moved to DEST, its output in LOG;
# fails, leaving DEST absent, unless the run gave exactly one trace.
profile_once() {
  local bin=$1 name=$2 prio=$3 dest=$4 log=$5 cmd=$6 tmp traces
  tmp=$(mktemp -d)
  # shellcheck disable=SC2086 # the command splits at spaces, as fikit-run's --job does
  "$bin/fikit-profile" --name "$name" --priority "$prio" --single-run -o "$tmp" -- $cmd >"$log" 2>&1
  traces=("$tmp"/*.parquet)
  if [ "${#traces[@]}" -ne 1 ] || [ ! -f "${traces[0]}" ]; then
    rm -rf "$tmp"
    return 1
  fi
  mv "${traces[0]}" "$dest"
  rm -rf "$tmp"
}

# The launch-bound top job of held-partner.sh and idle-context.sh, defined
# once: their results compare only as runs of the same job.
# shellcheck disable=SC2034 # read by the scripts that source this file
LAUNCH_BOUND_TOP="python3 scripts/workloads/workload.py --model resnet50 --batch 1 --mode eval --iters 1500 --warmup 10"
