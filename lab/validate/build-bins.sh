#!/usr/bin/env bash
# Release binaries of one or more commits, packed for device calls: for each
# COMMIT, fikit-run, fikit-profile, libfikit_collector.so and
# libfikit_shim.so built in a worktree of it (one shared target folder, so
# a second commit rebuilds only what differs), stripped, in a folder named
# by the commit as given; all of them in one xz tar (two commits: about
# 8 MB, against about 6 MB for one, the binaries being mostly alike).
# On the device: `mkdir -p /tmp/b && tar -C /tmp/b -xJf OUT` and name
# /tmp/b/COMMIT as gpus-call.sh's BIN_ARCHIVE. From the repository root;
# about 10 minutes for the first commit on 2 cores, 4 for each more.
#
#   lab/validate/build-bins.sh OUT.tar.xz COMMIT [COMMIT ...]
#
# TARGET (environment): the shared target folder (default /tmp/build-bins-target).
set -euo pipefail
OUT=${1:?usage: build-bins.sh OUT.tar.xz COMMIT [COMMIT ...]}
shift
[ $# -ge 1 ] || { echo "build-bins: name at least one commit" >&2; exit 2; }
TARGET=${TARGET:-/tmp/build-bins-target}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for c in "$@"; do
  git rev-parse --verify -q "$c^{commit}" >/dev/null || { echo "build-bins: $c: no such commit" >&2; exit 2; }
  wt="$stage/wt-$c"
  git worktree add -q --detach "$wt" "$c"
  (cd "$wt" && cargo build -q --release --locked -p fikit-run -p fikit-profile -p fikit-collector -p fikit-shim --target-dir "$TARGET")
  mkdir -p "$stage/bins/$c"
  for f in fikit-run fikit-profile libfikit_collector.so libfikit_shim.so; do cp "$TARGET/release/$f" "$stage/bins/$c/"; done
  strip "$stage/bins/$c/fikit-run" "$stage/bins/$c/fikit-profile"
  strip --strip-unneeded "$stage/bins/$c/"*.so
  git worktree remove --force "$wt"
  echo "build-bins: $c built"
done
mkdir -p "$(dirname "$OUT")"
tar -C "$stage/bins" -cf - "$@" | xz -9e -T0 >"$OUT"
ls -la "$OUT"
