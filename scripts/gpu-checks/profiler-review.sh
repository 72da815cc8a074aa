#!/usr/bin/env bash
# GPU checks of the profiler review fixes (issue 3). Needs a CUDA GPU and
# python3 with torch; takes well under 2 minutes on an H200.
#
#   scripts/gpu-checks/profiler-review.sh [FIKIT_PROFILE] [COLLECTOR]
#
# Defaults: target/release/fikit-profile and target/release/libfikit_collector.so
# (cargo build --release -p fikit-profile -p fikit-collector). Outputs go under
# $OUT (default /tmp/fikit-profiler-review): one folder per check, the logs, and
# summary.txt with one PASS/FAIL line per check and its evidence.
set -uo pipefail
PROFILE="${1:-target/release/fikit-profile}"
COLLECTOR="${2:-target/release/libfikit_collector.so}"
PYTHON="${PYTHON:-python3}"
OUT="${OUT:-/tmp/fikit-profiler-review}"
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
export FIKIT_COLLECTOR="$COLLECTOR"

result() { echo "$1 $2: $3" | tee -a "$SUMMARY"; }

# meta FILE KEY: a fikit.* metadata value of a trace (read from the Parquet
# footer's key/value strings, so no pyarrow is needed).
meta() {
    "$PYTHON" - "$1" "$2" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
m = re.search(rb"fikit\." + re.escape(sys.argv[2].encode()) + rb"[\x00-\x1f]{1,3}([ -~]{1,60}?)(?:[\x00-\x1f]|$)", data[-65536:])
print(m.group(1).decode() if m else "MISSING")
EOF
}

# A small torch workload: matmuls, then it prints the libcupti files mapped
# into it (distinct real paths) and torch's CUDA version.
cat >"$OUT/work.py" <<'EOF'
import os, sys, torch
x = torch.randn(256, 256, device="cuda")
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 50):
    x = torch.relu(x @ x) / 256
torch.cuda.synchronize()
if os.environ.get("WITH_TORCH_PROFILER") == "1":
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        y = x @ x
        torch.cuda.synchronize()
    n = sum(1 for e in p.events() if e.device_type.name == "CUDA")
    print(f"torch_profiler_cuda_events={n}")
maps = open("/proc/self/maps").read().split("\n")
cupti = sorted({os.path.realpath(l.split()[-1]) for l in maps
                if "/libcupti.so" in l and l.split()[-1].startswith("/")})
print("cupti_copies=" + ";".join(cupti))
print("torch_cuda=" + str(torch.version.cuda))
EOF

# 1. fikit.cuda_version is the program's runtime version, source runtime.
d="$OUT/1-cuda-version"; mkdir -p "$d"
"$PROFILE" -q -n cv -o "$d" -- "$PYTHON" "$OUT/work.py" >"$d/stdout" 2>"$d/stderr"
rc=$?
t=$(ls "$d"/cv-*.parquet 2>/dev/null | head -1)
torch_cuda=$(sed -n 's/^torch_cuda=//p' "$d/stdout")
if [ -n "$t" ]; then
    cv=$(meta "$t" cuda_version); src=$(meta "$t" cuda_version_source); drv=$(meta "$t" driver_version)
else
    cv=none; src=none; drv=none
fi
if [ $rc -eq 0 ] && [ "$cv" = "$torch_cuda" ] && [ "$src" = runtime ]; then
    result PASS cuda_version "cuda_version=$cv source=$src (torch.version.cuda=$torch_cuda, driver=$drv)"
else
    result FAIL cuda_version "rc=$rc cuda_version=$cv source=$src torch.version.cuda=$torch_cuda driver=$drv trace=${t:-none}"
fi

# 2. Exactly one libcupti in the process: the program's, even when
#    FIKIT_CUPTI_PATH names another copy (a toolkit's, when there is one).
d="$OUT/2-one-libcupti"; mkdir -p "$d"
other=$(ls /usr/local/cuda*/extras/CUPTI/lib64/libcupti.so.* /usr/local/cuda*/targets/x86_64-linux/lib/libcupti.so.* 2>/dev/null | head -1)
FIKIT_CUPTI_PATH="${other:-}" "$PROFILE" -q -n one -o "$d" -- "$PYTHON" "$OUT/work.py" >"$d/stdout" 2>"$d/stderr"
rc=$?
copies=$(sed -n 's/^cupti_copies=//p' "$d/stdout")
n=$(echo "$copies" | tr ';' '\n' | grep -c . || true)
chosen=$(grep -o 'collector: libcupti: [^ ]*.*' "$d/stderr" | head -1)
overruled=$(grep -c "is not the libcupti the program already loaded" "$d/stderr" || true)
if [ $rc -eq 0 ] && [ "$n" = 1 ] && ls "$d"/one-*.parquet >/dev/null 2>&1; then
    result PASS one_libcupti "1 copy mapped: $copies; $chosen; FIKIT_CUPTI_PATH=${other:-unset}, overruled notes: $overruled"
else
    result FAIL one_libcupti "rc=$rc copies($n)=$copies; $chosen; FIKIT_CUPTI_PATH=${other:-unset}"
fi

# 3. A daemonized grandchild doing CUDA work after its parent exited is
#    waited for; its trace is complete; the exit status is the parent's (0).
d="$OUT/3-grandchild"; mkdir -p "$d"
cat >"$d/parent.py" <<EOF
import os, subprocess, sys
subprocess.Popen([sys.executable, "$OUT/work.py", "2000"], start_new_session=True,
                 stdout=open("$d/grandchild.out", "w"), stderr=subprocess.STDOUT)
print("parent exits")
EOF
start=$(date +%s)
"$PROFILE" -q -n gc -o "$d" --wait-descendants 60 -- "$PYTHON" "$d/parent.py" >"$d/stdout" 2>"$d/stderr"
rc=$?
secs=$(( $(date +%s) - start ))
ntr=$(ls "$d"/gc-*.parquet 2>/dev/null | wc -l)
complete=$(for t in "$d"/gc-*.parquet; do [ -f "$t" ] && meta "$t" capture_complete; done | tr '\n' ' ')
waited=$(grep -o "waiting up to [0-9]* s for [0-9]* process(es)[^;]*" "$d/stderr" | head -1)
if [ $rc -eq 0 ] && [ "$ntr" -ge 1 ] && ! echo "$complete" | grep -q false && [ -n "$waited" ]; then
    result PASS grandchild "exit 0 after ${secs}s; $ntr trace(s), capture_complete: $complete; '$waited'"
else
    result FAIL grandchild "rc=$rc after ${secs}s; $ntr trace(s), capture_complete: $complete; waited='$waited'"
fi

# 4. A start-up failure after activity was enabled undoes it: the program
#    runs normally, nothing is recorded, and CUPTI is free again, so
#    torch.profiler in the same process records CUDA events.
d="$OUT/4-undo"; mkdir -p "$d"
FIKIT_TEST_FAIL_START=1 WITH_TORCH_PROFILER=1 "$PROFILE" -q -n undo -o "$d" -- \
    "$PYTHON" "$OUT/work.py" >"$d/stdout" 2>"$d/stderr"
rc=$?
events=$(sed -n 's/^torch_profiler_cuda_events=//p' "$d/stdout")
stopped=$(grep -o "recording stopped at start-up: [^;]*; everything[^,]*" "$d/stderr" | head -1)
ntr=$(ls "$d"/undo-*.parquet 2>/dev/null | wc -l)
untraced=$(grep -c "the collector stopped at start-up" "$d/stderr" || true)
if [ $rc -eq 0 ] && [ -n "$stopped" ] && [ "$ntr" = 0 ] && [ "${events:-0}" -gt 0 ] && [ "$untraced" -gt 0 ]; then
    result PASS undo "exit 0; '$stopped'; no trace; fikit-profile says the process ran untraced; torch.profiler then recorded $events CUDA events"
else
    result FAIL undo "rc=$rc; stopped='$stopped'; traces=$ntr; untraced notes=$untraced; torch.profiler CUDA events=${events:-none}"
fi

# 5. The record-layout check accepts this libcupti (its version is within the
#    checked CUDA 11.4-13.4 headers) and the kernels decode sensibly.
d="$OUT/1-cuda-version"
t=$(ls "$d"/cv-*.parquet 2>/dev/null | head -1)
refused=$(grep -c "newer than any whose activity record" "$d/stderr" || true)
if [ -n "$t" ]; then
    cupti=$(meta "$t" cupti_version)
    result "$([ "$refused" = 0 ] && echo PASS || echo FAIL)" layout_check "cupti_version=$cupti accepted (refusal notes: $refused); a trace with kernels was written"
else
    result FAIL layout_check "no trace; refusal notes: $refused (see $d/stderr)"
fi

echo "summary: $SUMMARY"
grep -q '^FAIL' "$SUMMARY" && exit 1 || exit 0
