#!/usr/bin/env bash
# reports/validation/gemm-pressure-h100-2026-11-27/: the command record of this round, as committed with it
# (call.sh; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# Issue 15, in sample: the partners' and batch-1 jobs' pressure on a victim
# shaped like the batch-1 jobs' own kernels (lab/validate/gemm-victim.py)
# under MPS, H100. Binaries: .gpu/split/bin.tar.xz (9a7f7db's tree). It ran
# lab/validate/gemm-pressure.sh of 3d8f123, since folded into
# pressure.sh as KIND=gemm.
set -u
SECONDS=0
B=.gpu/b
mkdir -p $B && tar xJf .gpu/split/bin.tar.xz -C $B && chmod +x $B/*
D=$OUT/g; mkdir -p $D
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
timeout -s INT -k 20 420 lab/validate/gemm-pressure.sh $B lab/validate/real-set.json $D r50b128 bertt32 r50t32 bertb1 vitb1
echo "pass exit $? at ${SECONDS}s"
find $D -name "*.parquet" | xargs ls -la; du -sm $D
rm -rf /tmp/gkeep && cp -r $D /tmp/gkeep  # for a later call while the machine is held
# Only the kernel rows come back (the victim's API rows make its traces 25-35 MB).
python3 - "$D" <<'PY'
import glob, os, sys
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
cols = ["kind", "start_ns", "end_ns", "name", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
        "registers_per_thread", "static_shared_bytes", "dynamic_shared_bytes", "kernel_key", "shared_config_bytes"]
for f in glob.glob(f"{sys.argv[1]}/*/*.parquet"):
    md = pq.ParquetFile(f).metadata.metadata
    t = pq.read_table(f, columns=cols)
    # Strings as plain strings: pyarrow cannot filter string_view columns.
    t = t.cast(pa.schema([pa.field(c.name, pa.string() if c.type == pa.string_view() else c.type) for c in t.schema]))
    t = t.filter(pc.equal(t["kind"], "kernel")).replace_schema_metadata(md)
    pq.write_table(t, f, compression="zstd")
PY
du -sm $D
(cd $OUT && tar czf - g | split -b 15M -d - g.tar. && rm -rf g); ls -la $OUT
