#!/usr/bin/env bash
# The launch-interception experiment (README.md here): on a GPU machine, with $OUT set.
set -u
SRC=$(cd "$(dirname "$0")" && pwd); W=$(mktemp -d); cp "$SRC"/*.c "$SRC"/r50.py "$W"/; cd "$W";nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CU=$(ls /usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13* 2>/dev/null|head -1)
[ -z "$CU" ]&&CU=$(find / -name 'libcupti.so.13*' 2>/dev/null|head -1);export CUPTI=$CU;echo CUPTI=$CU
gcc -O2 -o bench bench.c -ldl -lpthread&&gcc -O2 -fPIC -shared -o spy.so spy.c -ldl -lpthread||exit 1
H=$(find / -name cupti_callbacks.h 2>/dev/null|head -1);echo H=$H;grep -n -B3 -A4 "serialize access\|Only a single subscriber" $H|head -60>$OUT/hdr.txt
I=$(dirname $(find / -name cuda.h -path '*include*' 2>/dev/null|head -1));grep -n "CU_GET_PROC_ADDRESS_\|define cuGetProcAddress\|define cuLaunchKernel\b" $I/cuda.h>>$OUT/hdr.txt;grep -n "cudaGetDriverEntryPointByVersion\|define cudaGetDriverEntryPoint" $I/cuda_runtime_api.h|head>>$OUT/hdr.txt
S=$PWD/spy.so
for r in 1 2 3;do for m in base sub other lk;do M=$m ./bench;done;SPY_WRAP=1 LD_PRELOAD=$S M=base ./bench;done 2>&1|tee $OUT/bench.txt
for P in 2000 500;do M=tog P=$P ./bench;done 2>&1|tee -a $OUT/bench.txt
LD_PRELOAD=$S CUDA_INJECTION64_PATH=$S SPY_LOG=$OUT/gpa.log SPY_WRAP=1 SPY_CUPTI=1 N=20 TAG=cov python3 r50.py 2>&1|tail -5|tee $OUT/r50.txt
for r in 1 2 3;do N=300 TAG=base python3 r50.py;SPY_WRAP=1 LD_PRELOAD=$S N=300 TAG=wrap python3 r50.py;CUDA_INJECTION64_PATH=$S SPY_CUPTI=2 N=300 TAG=cupti4 python3 r50.py;done 2>&1|grep -v Warn|tee -a $OUT/r50.txt
cd $OUT;awk '{print $1,$2,$3}' gpa.log|sort|uniq -c|sort -rn>sum.txt;grep -E "cuLaunch|cuGraphLaunch|cuGetProcAddress" gpa.log|sort|uniq -c>>sum.txt;gzip gpa.log
