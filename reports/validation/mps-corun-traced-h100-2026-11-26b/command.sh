#!/usr/bin/env bash
# reports/validation/mps-corun-traced-h100-2026-11-26b/: the command record of this round, as committed with it
# (call-a.sh, call-b.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call-a.sh ----
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

# ---- call-b.sh ----
# Issue 15 diagnosis, H100: in-sample pairs vitb1-bertt32 and bertb1-r50t32 under MPS, both jobs traced (as call3.sh); partners' profiles kept.
set -u
SECONDS=0
B=.gpu/diag
for f in fikit-run fikit-profile libfikit_collector.so libfikit_shim.so; do gunzip -c $B/$f.gz > $B/$f; done
chmod +x $B/fikit-run $B/fikit-profile
W=scripts/workloads/workload.py
D=$OUT/t; mkdir -p $D/prof
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
cmd() { python3 -c 'import json,sys; print(json.dumps(json.load(open("lab/validate/real-set.json"))["jobs"][sys.argv[1]]["command"]))' $1; }
prof() { # name prio
  $B/fikit-profile -n $1 -p $2 -o $D/prof -- $(python3 -c 'import json,sys; print(" ".join(json.load(open("lab/validate/real-set.json"))["jobs"][sys.argv[1]]["command"]))' $1) > $D/prof/$1.log 2>&1
  echo "profiled $1 at ${SECONDS}s"
}
mk() { # small partner
  ps=$(ls $D/prof/$1-*.parquet | head -1); pp=$(ls $D/prof/$2-*.parquet | head -1)
  cat <<J
{"policies": ["exclusive","mps"], "repetitions": 2, "jobs": [
 {"name": "$1", "priority": 0, "profile": "$(realpath $ps)", "command": $(cmd $1)},
 {"name": "$2", "priority": 9, "profile": "$(realpath $pp)", "command": $(cmd $2)}]}
J
}
prof vitb1 high; prof bertt32 low
mk vitb1 bertt32 > $D/vitb1.json
timeout -s INT -k 20 280 $B/fikit-run $D/vitb1.json --trace $D/tr-vitb1 -o $D/run-vitb1 > $D/run-vitb1.log 2>&1; echo "vitb1 exit $? at ${SECONDS}s"
grep -E "^│ (mps|exclusive)" $D/run-vitb1.log | cut -c1-160
if [ $SECONDS -lt 330 ]; then
  prof bertb1 high; prof r50t32 low
  mk bertb1 r50t32 > $D/bertb1.json
  left=$((545 - SECONDS)); [ $left -gt 200 ] && left=200
  timeout -s INT -k 15 $left $B/fikit-run $D/bertb1.json --trace $D/tr-bertb1 -o $D/run-bertb1 > $D/run-bertb1.log 2>&1; echo "bertb1 exit $? at ${SECONDS}s"
  grep -E "^│ (mps|exclusive)" $D/run-bertb1.log | cut -c1-160
fi
# exclusive rounds' traces are not needed (the profiles are the alone traces); partners' profiles are kept (to re-simulate)
rm -rf $D/tr-*/exclusive-*
tot() { du -sm $D | cut -f1; }
[ $(tot) -gt 52 ] && rm -f $D/tr-vitb1/mps-2/bertt32-*.parquet
[ $(tot) -gt 52 ] && rm -f $D/tr-bertb1/mps-2/r50t32-*.parquet
find $D -name '*.parquet' | xargs ls -la; echo "total $(tot) MB"
(cd $OUT && tar cf - t | split -b 15M -d - t.tar. && rm -rf t); ls -la $OUT

# ---- device.txt: the device, as recorded ----
#   NVIDIA H100 80GB HBM3, 580.159.04
#   2026-11-26T06:56:53Z
#   NVIDIA H100 80GB HBM3, 580.159.04
#   2026-11-26T07:04:48Z
#   commands: bash .gpu/diag/call4.sh (call-a.sh here), then bash .gpu/diag/call5.sh (call-b.sh); .gpu/diag held fikit-run of 5c3d9d4 and fikit-profile, collector and shim of 705836d, gzipped
