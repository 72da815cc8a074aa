#!/usr/bin/env bash
# Fault (a): the profiled command is killed with SIGKILL mid-run (about 2 s
# into a 10 s workload). Expected: fikit-profile exits 137 (128 + SIGKILL) and
# still writes the process's trace, marked capture_complete=false, holding the
# kernels up to the collector's last flush (at most 100 ms before the kill).
source "$(dirname "$0")/lib.sh"
out="$WORK/traces" pidf="$WORK/python.pid"
"$FIKIT_PROFILE" -q --name sigkill -o "$out" -- \
    "$PYTHON" "$WORKLOAD" --seconds 10 --pid-file "$pidf" >"$WORK/profile.log" 2>&1 &
fp=$!
if wait_for_file "$pidf" 60; then
    sleep 2
    pypid=$(cat "$pidf")
    kill -KILL "$pypid" && fact "SIGKILL sent to the workload (pid $pypid)"
else
    fact "the workload never became ready (profile.log)"
    FAILED=1
fi
wait_pid "$fp" 60
check "fikit-profile exit $STATUS = 137" [ "$STATUS" = 137 ]
n=$(count_traces "$out")
check "traces $n = 1" [ "$n" = 1 ]
if [ "$n" = 1 ]; then
    t=$(traces "$out")
    c=$(field "$t" capture_complete)
    k=$(field "$t" kernels)
    check "capture_complete=$c is false" [ "$c" = false ]
    check "kernels $k > 0" [ "${k:-0}" -gt 0 ]
fi
finish sigkill
