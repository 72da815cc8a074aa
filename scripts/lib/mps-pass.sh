# Sourced by the set's GPU passes beside a calibration kernel
# (lab/validate/sensitivity.sh, pressure.sh), run from the repository root.

# private_mps OUT: starts an MPS daemon in a private pipe folder. On any exit
# of the script, OUT/stop is touched (a `fikit-lab load --stop-file OUT/stop`
# still running stops), its background jobs are killed and waited for, and
# the daemon quits.
private_mps() {
  PASS_OUT=$1
  export CUDA_MPS_PIPE_DIRECTORY
  CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d)
  export CUDA_MPS_LOG_DIRECTORY="$CUDA_MPS_PIPE_DIRECTORY/log"
  mkdir -p "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || { echo "cannot start the MPS daemon" >&2; exit 1; }
  # shellcheck disable=SC2046 # the background jobs' pids, one word each
  trap 'touch "$PASS_OUT/stop"; kill $(jobs -p) 2>/dev/null; wait; echo quit | nvidia-cuda-mps-control; rm -rf "$CUDA_MPS_PIPE_DIRECTORY"' EXIT
}

# job_command SET JOB: sets the array `cmd` to JOB's command in the set file
# SET (empty when JOB is not in it or SET cannot be read).
job_command() {
  mapfile -t cmd < <(python3 -c 'import json,sys; [print(a) for a in json.load(open(sys.argv[1]))["jobs"][sys.argv[2]]["command"]]' "$1" "$2" 2>/dev/null)
}
