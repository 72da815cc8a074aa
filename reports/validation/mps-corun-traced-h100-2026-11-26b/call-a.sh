#!/usr/bin/env bash
# Issue 15 diagnosis, H100: in-sample pairs (r50b1, r50b8 beside r50b128) under MPS with both jobs traced, as call2.sh on the H200.
set -u
SECONDS=0
B=.gpu/diag
for f in fikit-run fikit-profile libfikit_collector.so libfikit_shim.so; do gunzip -c $B/$f.gz > $B/$f; done
chmod +x $B/fikit-run $B/fikit-profile
W=scripts/workloads/workload.py
D=$OUT/e; mkdir -p $D/prof
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
$B/fikit-profile -n r50b1 -p high -o $D/prof -- python3 $W --model resnet50 --batch 1 --mode eval --iters 400 --warmup 10 > $D/prof/r50b1.log 2>&1
$B/fikit-profile -n r50b8 -p high -o $D/prof -- python3 $W --model resnet50 --batch 8 --mode eval --iters 300 --warmup 10 > $D/prof/r50b8.log 2>&1
$B/fikit-profile -n r50b128 -p low -o $D/prof -- python3 $W --model resnet50 --batch 128 --mode eval --iters 400 --warmup 3 > $D/prof/r50b128.log 2>&1
p1=$(ls $D/prof/r50b1-*.parquet | head -1); p8=$(ls $D/prof/r50b8-*.parquet | head -1); pr=$(ls $D/prof/r50b128-*.parquet | head -1)
mk() { cat <<J
{"policies": ["exclusive","mps"], "repetitions": 2, "jobs": [
 {"name": "$1", "priority": 0, "profile": "$(realpath $2)", "command": $3},
 {"name": "r50b128", "priority": 9, "profile": "$(realpath $pr)", "command": ["python3","$W","--model","resnet50","--batch","128","--mode","eval","--iters","400","--warmup","3"]}]}
J
}
mk r50b1 $p1 '["python3","'$W'","--model","resnet50","--batch","1","--mode","eval","--iters","400","--warmup","10"]' > $D/r50b1.json
mk r50b8 $p8 '["python3","'$W'","--model","resnet50","--batch","8","--mode","eval","--iters","300","--warmup","10"]' > $D/r50b8.json
for j in r50b1 r50b8; do
  timeout -s INT -k 20 200 $B/fikit-run $D/$j.json --trace $D/tr-$j -o $D/run-$j > $D/run-$j.log 2>&1; echo "$j exit $? at ${SECONDS}s"
  grep -E "^│ (mps|exclusive)" $D/run-$j.log | cut -c1-150
done
# exclusive rounds' traces are not needed (the profiles are the alone traces)
rm -rf $D/tr-*/exclusive-*
tot() { du -sm $D | cut -f1; }
[ $(tot) -gt 52 ] && rm -f $D/tr-r50b8/mps-2/r50b128-*.parquet
find $D -name "*.parquet" | xargs ls -la; echo "total $(tot) MB"
(cd $OUT && tar cf - e | split -b 15M -d - e.tar. && rm -rf e); ls -la $OUT
