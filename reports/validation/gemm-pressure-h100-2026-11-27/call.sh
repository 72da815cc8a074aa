#!/usr/bin/env bash
# Issue 15, in sample: the partners' and batch-1 jobs' pressure on a victim
# shaped like the batch-1 jobs' own kernels (scripts/validate/gemm-victim.py)
# under MPS, H100. Binaries: .gpu/split/bin.tar.xz (9a7f7db's tree).
set -u
SECONDS=0
B=.gpu/b
mkdir -p $B && tar xJf .gpu/split/bin.tar.xz -C $B && chmod +x $B/*
D=$OUT/g; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
timeout -s INT -k 20 420 scripts/validate/gemm-pressure.sh $B scripts/validate/real-set.json $D r50b128 bertt32 r50t32 bertb1 vitb1
echo "pass exit $? at ${SECONDS}s"
find $D -name "*.parquet" | xargs ls -la; du -sm $D
(cd $OUT && tar czf - g | split -b 15M -d - g.tar. && rm -rf g); ls -la $OUT
