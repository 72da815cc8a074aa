#!/usr/bin/env bash
# One device call that runs a validation set's sittings side by side, one
# per GPU of a multi-GPU machine: GPU g runs `set-call.sh` over the pairs
# named in argument g (comma-separated), with CUDA_VISIBLE_DEVICES=g and its
# processes pinned to its own share of the CPUs local to that GPU (the
# node's CPUs split evenly among the GPUs on it), so that each sitting sees
# a machine like a one-GPU one. Each sitting's folder is WORK/gK; the
# profiles every earlier sitting made (WORK/pool/, filled at the end of each
# call) are copied into it first, so a job is profiled once a machine (a
# set's jobs with the same profile command share one through fikit-run's
# twins). Everything this call wrote under WORK goes back as one xz tar in
# pieces of 15 MB, $OUT/pack-TAG.NN, and each sitting's output as
# $OUT/device-TAG.txt. Later calls on the same warm machine resume where
# this one stopped (complete pairs are not run again).
#
#   lab/validate/gpus-call.sh BIN_ARCHIVE SET WORK TAG DEADLINE_S PAIRS_GPU0 [PAIRS_GPU1 ...]
#
# DEADLINE_S: when the sittings stop starting rounds; at least a minute
# under the call's own limit (the packing follows), which is less than its
# timeout where the session has less device time left: a call killed
# before it packs brings nothing back.
# BIN_ARCHIVE: an xz tar of fikit-run, fikit-profile, libfikit_collector.so
# and libfikit_shim.so, or a folder holding them (lab/validate/build-bins.sh).
# RUN_ARGS and QUIET pass through to set-call.sh; a sitting's own options
# follow its pairs after an @ (PAIRS@OPTIONS, e.g. 'a-b@--policy
# exclusive,mps'), added to RUN_ARGS. From the repository root.
# SEED (environment): comma-separated packs of earlier calls (each the
# pieces of one pack-TAG joined, an xz tar; or a glob whose files, joined in
# order, are one), unpacked in order beside WORK before anything runs, so
# that a fresh machine resumes where they stopped (WORK's last folder name
# must be the one they were made with). The carried files and the tracked
# tree together must stay under the device tool's 64 MiB: strip the binaries
# (`strip`, then `xz -9e`: about 6 MB) and carry only the packs that hold
# what is not finished. A pack larger than a call can carry goes in pieces
# (`split -b`), each in its own ignored folder carried by its own call on
# the same warm machine (the device tool keeps ignored paths between calls
# on a warm machine), the last call naming the glob, e.g. SEED='.gpu/s0*/seed.*'.
# FIRST_GPU (environment, default 0): the sittings take GPUs FIRST_GPU,
# FIRST_GPU+1, ... (their folders WORK/gK named by the GPU), so that two
# calls of this script with other binaries or sets share one machine, each
# in the background with its own WORK and TAG.
# RUN_ARGS may name the sitting's own folder as {DIR} (e.g. '--trace
# {DIR}/traces'). POST (environment): a bash command run after the sittings
# end and before the packing, with SITTINGS set to their folders (e.g. a
# digest of their traces). NOPACK (environment): a `find -path` pattern left
# out of the pack (e.g. '*/traces': a set's traces are hundreds of MB, more
# than a call brings back; they stay on the warm machine for the next call).
set -u
ARCHIVE=${1:?usage: gpus-call.sh BIN_ARCHIVE SET WORK TAG DEADLINE_S PAIRS_GPU0 [PAIRS_GPU1 ...]}
SET=${2:?set file}
WORK=${3:?work folder}
TAG=${4:?tag}
DEADLINE=${5:?deadline in seconds}
shift 5
[ $# -ge 1 ] || { echo "gpus-call: no pairs named" >&2; exit 2; }
OUTDIR=${OUT:-/tmp/gpus-call-out}
mkdir -p "$WORK/bin" "$WORK/pool" "$OUTDIR"
IFS=, read -ra seeds <<<"${SEED:-}"
for s in "${seeds[@]}"; do
  compgen -G "$s" >/dev/null || { echo "gpus-call: seed $s: no such file" >&2; exit 2; }
  # shellcheck disable=SC2086  # a glob of pieces, joined in order
  cat $s | tar -C "$(dirname "$WORK")" -xJf - || { echo "gpus-call: cannot unpack seed $s" >&2; exit 2; }
done
# shellcheck source=lab/validate/lib/bins.sh
source "$(dirname "$0")/lib/bins.sh"
unpack_bins "$ARCHIVE" "$WORK/bin" || exit 2
ngpu=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
FIRST=${FIRST_GPU:-0}
[ $(($# + FIRST)) -le "$ngpu" ] || { echo "gpus-call: $# sittings from GPU $FIRST for $ngpu GPUs" >&2; exit 2; }

# The CPUs of GPU g: its NUMA node's, split evenly among the GPUs on it.
cpus_of() {
  python3 - "$1" <<'PY'
import subprocess, sys
g = int(sys.argv[1])
ids = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                     capture_output=True, text=True, check=True).stdout.split()
def local(bus):
    b = bus.lower()
    b = b[4:] if len(b.split(":")[0]) == 8 else b
    try:
        return open(f"/sys/bus/pci/devices/{b}/local_cpulist").read().strip()
    except OSError:
        return ""
def expand(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, z = part.split("-")
            out += range(int(a), int(z) + 1)
        elif part:
            out.append(int(part))
    return out
lists = [local(b) for b in ids]
mine = lists[g]
if not mine:
    print("")
    sys.exit()
peers = [i for i, l in enumerate(lists) if l == mine]
cpus = expand(mine)
k, n = peers.index(g), len(peers)
share = cpus[k * len(cpus) // n:(k + 1) * len(cpus) // n]
print(",".join(map(str, share)))
PY
}

STAMP=$(mktemp)
touch "$STAMP"
sleep 1
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $ngpu GPUs, $(nproc) CPUs"
pids=()
g=$FIRST
for arg in "$@"; do
  pairs=${arg%%@*}
  own=""
  [ "$arg" != "$pairs" ] && own=${arg#*@}
  d="$WORK/g$g"
  mkdir -p "$d/profiles"
  cp -np "$WORK"/pool/*.parquet "$WORK"/pool/*.log "$d/profiles/" 2>/dev/null
  cpus=$(cpus_of "$g")
  echo "== GPU $g: pairs $pairs${own:+ ($own)}, CPUs ${cpus:-all}"
  pin=()
  [ -n "$cpus" ] && pin=(taskset -c "$cpus")
  args="${RUN_ARGS:-} $own"
  RUN_ARGS="${args//\{DIR\}/$d}" CUDA_VISIBLE_DEVICES=$g "${pin[@]}" lab/validate/set-call.sh "$WORK/bin" "$SET" "$d" \
    "$WORK/pack-g$g" "$DEADLINE" "$pairs" >"$OUTDIR/device-$TAG-g$g.txt" 2>&1 &
  pids+=($!)
  g=$((g + 1))
done
for p in "${pids[@]}"; do wait "$p"; done
for d in "$WORK"/g*/profiles; do cp -np "$d"/*.parquet "$d"/*.log "$WORK/pool/" 2>/dev/null; done
rm -f "$WORK"/pack-g*
if [ -n "${POST:-}" ]; then
  SITTINGS=$(for ((i = FIRST; i < g; i++)); do printf '%s ' "$WORK/g$i"; done) bash -c "$POST" >"$OUTDIR/post-$TAG.txt" 2>&1
  echo "== POST exited $? (its output: post-$TAG.txt)"
fi
cat "$OUTDIR"/device-"$TAG"-g*.txt >"$OUTDIR/device-$TAG.txt"
rm -f "$OUTDIR"/device-"$TAG"-g*.txt
base=$(basename "$WORK")
skip=()
[ -n "${NOPACK:-}" ] && skip=(-o -path "$NOPACK" -prune)
(cd "$(dirname "$WORK")" && find "$base" -path "$base/bin" -prune -o -path "$base/pool" -prune \
  "${skip[@]}" -o -type f -newer "$STAMP" -print0 | tar cf - --null -T - | xz -6 -T0) | split -b 15M -d - "$OUTDIR/pack-$TAG."
ls -la "$OUTDIR"
