#!/usr/bin/env bash
# Builds the fikit wheel into target/wheels/ (python/pyproject.toml):
# fikit-profile, fikit-sim and fikit-run as scripts, the collector and the
# launch shim beside them, the shipped traces under share/fikit/traces, and the
# `fikit` Python module. manylinux2014 x86-64: everything is linked by zig
# against glibc 2.17, so the wheel installs on any Linux of the last decade.
#
# cargo zigbuild makes the two libraries (no Polars: a minute); maturin then
# builds the three commands in one cargo build (the fikit-wheel package,
# python/Cargo.toml: one Polars) and packs the wheel. Built apart, maturin's
# zig linker wrapper differs from cargo-zigbuild's, and cargo compiles every
# dependency again for each. On this project's 2-core machine the release
# wheel took about an hour (2026-11-27, the commands then built twice). The
# script checks
# that no artifact needs a glibc newer than 2.17 and that the wheel holds
# everything, then prints its size.
#
# Needs the Rust toolchain, python3 (venv, pip) and PyPI the first time (the
# pinned python/requirements-build.txt goes into target/wheel-venv).
# FIKIT_WHEEL_PROFILE=wheel-test builds unoptimized (the CI test of the packaging);
# the default, release, is the wheel users install.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=target/wheel-venv
# shellcheck source=scripts/lib/venv.sh
source scripts/lib/venv.sh
pinned_venv "$VENV" python/requirements-build.txt "wheel build"
export PATH="$PWD/$VENV/bin:$PATH"

PROFILE=${FIKIT_WHEEL_PROFILE:-release}
TRIPLE=x86_64-unknown-linux-gnu
GLIBC=2.17
BUILT=target/$TRIPLE/$PROFILE
STAGE=target/wheel/fikit.data
OUT=target/wheels
LIBS=(libfikit_collector.so libfikit_shim.so)
COMMANDS=(fikit-profile fikit-sim fikit-run)

echo "== cargo zigbuild ($PROFILE, glibc $GLIBC)"
cargo zigbuild --locked --profile "$PROFILE" --target "$TRIPLE.$GLIBC" \
  -p fikit-collector -p fikit-shim

echo "== staging $STAGE"
rm -rf "$STAGE"
mkdir -p "$STAGE/scripts"
for f in "${LIBS[@]}"; do cp "$BUILT/$f" "$STAGE/scripts/"; done
for gpu in h200 h100; do
  mkdir -p "$STAGE/data/share/fikit/traces/$gpu"
  cp traces/"$gpu"/*.parquet "$STAGE/data/share/fikit/traces/$gpu/"
done

echo "== maturin build"
rm -rf "$OUT"
maturin_profile=(--profile "$PROFILE")
[ "$PROFILE" = release ] && maturin_profile=(--release)
(cd python && maturin build "${maturin_profile[@]}" --zig --compatibility manylinux2014 \
  --target "$TRIPLE" --out "../$OUT")

echo "== glibc versions needed"
for f in "${LIBS[@]}" "${COMMANDS[@]}"; do
  need=$(objdump -T "$BUILT/$f" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  echo "$f: glibc $need"
  if [ "$(printf '%s\n%s\n' "$need" "$GLIBC" | sort -V | tail -1)" != "$GLIBC" ]; then
    echo "build.sh: $f needs glibc $need, newer than $GLIBC" >&2
    exit 1
  fi
done

wheel=$(ls "$OUT"/fikit-*.whl)
python3 - "$wheel" "${LIBS[@]}" "${COMMANDS[@]}" <<'PY'
import sys, zipfile
wheel, want = sys.argv[1], sys.argv[2:]
names = zipfile.ZipFile(wheel).namelist()
scripts = {n.rsplit("/", 1)[1] for n in names if ".data/scripts/" in n}
missing = [w for w in want if w not in scripts]
traces = [n for n in names if "/share/fikit/traces/" in n and n.endswith(".parquet")]
if missing or "fikit/__init__.py" not in names or not traces:
    sys.exit(f"build.sh: {wheel} lacks {missing or 'the fikit module or the traces'}")
print(f"{wheel}: {len(scripts)} scripts, {len(traces)} traces")
PY
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"
