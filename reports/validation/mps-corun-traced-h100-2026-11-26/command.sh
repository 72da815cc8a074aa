#!/usr/bin/env bash
# reports/validation/mps-corun-traced-h100-2026-11-26/: the command record of this round, as committed with it
# (call.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# Issue 15 diagnosis, H100: in-sample pairs gpt2dec-r50t32 and r50b1serve-bertt32 under MPS, both jobs traced.
set -u
SECONDS=0
B=.gpu/diag
for f in fikit-run fikit-profile libfikit_collector.so libfikit_shim.so; do gunzip -c $B/$f.gz > $B/$f; done
chmod +x $B/fikit-run $B/fikit-profile
W=scripts/workloads/workload.py
D=$OUT/g; mkdir -p $D/prof
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
prof gpt2dec high; prof r50t32 low
mk gpt2dec r50t32 > $D/gpt2dec.json
timeout -s INT -k 20 280 $B/fikit-run $D/gpt2dec.json --trace $D/tr-gpt2dec -o $D/run-gpt2dec > $D/run-gpt2dec.log 2>&1; echo "gpt2dec exit $? at ${SECONDS}s"
grep -E "^│ (mps|exclusive)" $D/run-gpt2dec.log | cut -c1-160
if [ $SECONDS -lt 330 ]; then
  prof r50b1serve high; prof bertt32 low
  mk r50b1serve bertt32 > $D/r50b1serve.json
  left=$((545 - SECONDS)); [ $left -gt 200 ] && left=200
  timeout -s INT -k 15 $left $B/fikit-run $D/r50b1serve.json --trace $D/tr-r50b1serve -o $D/run-r50b1serve > $D/run-r50b1serve.log 2>&1; echo "r50b1serve exit $? at ${SECONDS}s"
  grep -E "^│ (mps|exclusive)" $D/run-r50b1serve.log | cut -c1-160
fi
# exclusive rounds' traces are not needed (the profiles are the alone traces); partners' profiles are not needed here
rm -rf $D/tr-*/exclusive-*
rm -f $D/prof/r50t32-*.parquet $D/prof/bertt32-*.parquet
tot() { du -sm $D | cut -f1; }
[ $(tot) -gt 52 ] && rm -f $D/tr-gpt2dec/mps-2/r50t32-*.parquet
[ $(tot) -gt 52 ] && rm -f $D/tr-r50b1serve/mps-2/bertt32-*.parquet
find $D -name '*.parquet' | xargs ls -la; echo "total $(tot) MB"
(cd $OUT && tar cf - g | split -b 15M -d - g.tar. && rm -rf g); ls -la $OUT

# ---- device.txt: the device, as recorded ----
#   NVIDIA H100 80GB HBM3, 580.159.04
#   2026-11-26T05:16:57Z
