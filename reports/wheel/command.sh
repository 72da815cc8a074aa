#!/usr/bin/env bash
# 2026-11-27, one NVIDIA H100 80GB HBM3 (driver 580.159.04), the device tool's
# machine: the release wheel built here by scripts/wheel/build.sh (maturin
# 1.16.0, zig, manylinux2014), carried to the device in .gpu/, installed into
# the machine's PyTorch environment; no build of the checkout on the device.
OUT=$OUT timeout 560 scripts/wheel/gpu-check.sh .gpu/fikit-0.1.0-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
# wheel-gpu.txt: everything it printed; table.txt and run.json.xz: fikit-run's.
