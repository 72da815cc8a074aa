#!/usr/bin/env bash
# Issue 15, in sample: the candidate rule `--pressure-busiest` on two more of
# the set's in-sample pairs (r50b1serve-bertt32, gpt2dec-r50t32), H100. One
# call: each job profiled alone; the chase pressure pass of the four jobs
# (KIND=memory PASSES=1, as the rounds' pass) and the GEMM victim's pass of
# the two busy ones (KIND=gemm); `fikit-sim pressure` of each; then both
# pairs, exclusive and MPS, 2 repetitions. The tables are rebuilt here with
# and without the rule (`fikit-run --report`). Binaries: .gpu/busy/bin.tar.xz.
#
# As it ran on 2026-11-27 (one call, `call.sh`) it passed the 600 s a call
# may take during the second pair, and what it had written was lost but for
# the eight files the device tool brings back (the pressure passes). So it
# now runs in two calls on one machine, its work kept in /tmp/w while the
# machine is held: `call.sh 1` (the passes and the profiles, about 380 s),
# then `call.sh 2` (the pairs, about 310 s); each packs what it wrote into
# $OUT/PART.tar.
set -u
PART=${1:?usage: call.sh 1|2}
SECONDS=0
B=.gpu/b
mkdir -p $B && tar xJf .gpu/busy/bin.tar.xz -C $B && chmod +x $B/*
SET=scripts/validate/real-set.json
W=/tmp/w
D=$W/t
pack() { (cd $W && tar czf "$OUT/$PART.tar" t); ls -la "$OUT"; }
cmd() { python3 -c "import json,sys; print(json.dumps(json.load(open('$SET'))['jobs'][sys.argv[1]]['command']))" $1; }
prof() { realpath $(ls $D/prof/$1-*.parquet | head -1); }
if [ "$PART" = 1 ]; then
rm -rf $W; mkdir -p $D/prof
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
KIND=memory PASSES=1 timeout -s INT -k 15 260 scripts/validate/pressure.sh $B $SET $W/chase r50b1serve bertt32 gpt2dec r50t32 > $D/chase-pass.log 2>&1
echo "chase pass exit $? at ${SECONDS}s"
KIND=gemm timeout -s INT -k 15 150 scripts/validate/pressure.sh $B $SET $W/gemm bertt32 r50t32 > $D/gemm-pass.log 2>&1
echo "gemm pass exit $? at ${SECONDS}s"
$B/fikit-sim pressure $W/chase/r50b1serve $W/chase/bertt32 $W/chase/gpt2dec $W/chase/r50t32 -o $D/pressure-chase.json > $D/pressure-chase.txt 2>&1
$B/fikit-sim pressure $W/gemm/bertt32 $W/gemm/r50t32 -o $D/pressure-gemm.json > $D/pressure-gemm.txt 2>&1
cat $D/pressure-chase.txt $D/pressure-gemm.txt
for j in r50b1serve gpt2dec bertt32 r50t32; do
  $B/fikit-profile -n $j -p 0 -q -o $D/prof -- $(python3 -c "import json,sys; print(' '.join(json.load(open('$SET'))['jobs'][sys.argv[1]]['command']))" $j) > $D/prof/$j.log 2>&1
  echo "profile $j exit $? at ${SECONDS}s"
done
rm -rf $W/chase $W/gemm
pack
exit 0
fi
mk() { cat <<J
{"policies": ["exclusive","mps"], "repetitions": 2, "jobs": [
 {"name": "$1", "priority": 0, "profile": "$(prof $1)", "command": $(cmd $1)},
 {"name": "$2", "priority": 9, "profile": "$(prof $2)", "command": $(cmd $2)}]}
J
}
mk r50b1serve bertt32 > $D/r50b1serve-bertt32.json
mk gpt2dec r50t32 > $D/gpt2dec-r50t32.json
for p in r50b1serve-bertt32 gpt2dec-r50t32; do
  timeout -s INT -k 20 160 $B/fikit-run $D/$p.json -o $D/run-$p > $D/run-$p.log 2>&1; echo "$p exit $? at ${SECONDS}s"
done
for p in r50b1serve-bertt32 gpt2dec-r50t32; do grep " mps " $D/run-$p/table.txt; done
pack
