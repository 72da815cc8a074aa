#!/usr/bin/env bash
# reports/validation/mps-corun-traced-h100-2026-11-26d/: the command record of this round, as committed with it
# (call.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# Issue 15 diagnosis, H100: bertb1 and vitb1 beside r50b128 under MPS with
# both jobs traced (the set's pairs, run here outside the set's rounds, as a
# diagnostic), as call-a.sh of mps-corun-traced-h100-2026-11-26b did for
# resnet50 batch 1 and 8. Binaries: .gpu/set2/bin.tar.xz (fikit-run of
# 5c3d9d4, the rest of 705836d).
set -u
SECONDS=0
B=.gpu/set
mkdir -p $B && tar xJf .gpu/set2/bin.tar.xz -C $B && chmod +x $B/fikit-run $B/fikit-profile
W=scripts/workloads/workload.py
D=$OUT/t; mkdir -p $D/prof
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
$B/fikit-profile -n bertb1 -p high -o $D/prof -- python3 $W --model bert-base --batch 1 --seq-len 128 --mode eval --iters 300 --warmup 10 > $D/prof/bertb1.log 2>&1
$B/fikit-profile -n vitb1 -p high -o $D/prof -- python3 $W --model vit_b_16 --batch 1 --mode eval --iters 400 --warmup 10 > $D/prof/vitb1.log 2>&1
$B/fikit-profile -n r50b128 -p low -o $D/prof -- python3 $W --model resnet50 --batch 128 --mode eval --iters 400 --warmup 3 > $D/prof/r50b128.log 2>&1
pb=$(ls $D/prof/bertb1-*.parquet | head -1); pv=$(ls $D/prof/vitb1-*.parquet | head -1); pr=$(ls $D/prof/r50b128-*.parquet | head -1)
mk() { cat <<J
{"policies": ["exclusive","mps"], "repetitions": 2, "jobs": [
 {"name": "$1", "priority": 0, "profile": "$(realpath $2)", "command": $3},
 {"name": "r50b128", "priority": 9, "profile": "$(realpath $pr)", "command": ["python3","$W","--model","resnet50","--batch","128","--mode","eval","--iters","400","--warmup","3"]}]}
J
}
mk bertb1 $pb '["python3","'$W'","--model","bert-base","--batch","1","--seq-len","128","--mode","eval","--iters","300","--warmup","10"]' > $D/bertb1.json
mk vitb1 $pv '["python3","'$W'","--model","vit_b_16","--batch","1","--mode","eval","--iters","400","--warmup","10"]' > $D/vitb1.json
for j in bertb1 vitb1; do
  timeout -s INT -k 20 200 $B/fikit-run $D/$j.json --trace $D/tr-$j -o $D/run-$j > $D/run-$j.log 2>&1; echo "$j exit $? at ${SECONDS}s"
done
rm -rf $D/tr-*/exclusive-*
tot() { du -sm $D | cut -f1; }
[ $(tot) -gt 58 ] && rm -f $D/tr-vitb1/mps-2/r50b128-*.parquet
[ $(tot) -gt 58 ] && rm -f $D/tr-bertb1/mps-2/r50b128-*.parquet
find $D -name "*.parquet" | xargs ls -la; echo "total $(tot) MB"
(cd $OUT && tar czf - t | split -b 15M -d - t.tar. && rm -rf t); ls -la $OUT

# ---- device.txt: the device, as recorded ----
#   NVIDIA H100 80GB HBM3, 580.159.04
#   2026-11-26T15:34:45Z
