#!/usr/bin/env bash
# Fault (b): SIGINT sent to fikit-profile (`kill -INT`, as a supervisor would)
# while the workload runs. Expected: fikit-profile forwards it; the workload's
# KeyboardInterrupt handler synchronizes and exits 3; fikit-profile exits with
# that status (3) and writes a complete trace (capture_complete=true).
source "$(dirname "$0")/lib.sh"
out="$WORK/traces" pidf="$WORK/python.pid" done="$WORK/done.json"
# Job control on: a background job of a script would otherwise start with
# SIGINT ignored (and fikit-profile keeps an inherited ignored SIGINT ignored).
set -m
"$FIKIT_PROFILE" -q --name sigint -o "$out" -- \
    "$PYTHON" "$WORKLOAD" --seconds 20 --pid-file "$pidf" --done-file "$done" \
    >"$WORK/profile.log" 2>&1 &
fp=$!
set +m
if wait_for_file "$pidf" 60; then
    sleep 1.5
    kill -INT "$fp" && fact "SIGINT sent to fikit-profile (pid $fp)"
else
    fact "the workload never became ready (profile.log)"
    FAILED=1
fi
wait_pid "$fp" 60
check "fikit-profile exit $STATUS = 3 (the workload's own status after KeyboardInterrupt)" [ "$STATUS" = 3 ]
interrupted=$(grep -o '"interrupted": [a-z]*' "$done" 2>/dev/null | cut -d' ' -f2)
iters=$(grep -o '"iters": [0-9]*' "$done" 2>/dev/null | cut -d' ' -f2)
check "the workload saw KeyboardInterrupt (interrupted=${interrupted:-?}) after ${iters:-?} steps" \
    [ "$interrupted" = true ]
n=$(count_traces "$out")
check "traces $n = 1" [ "$n" = 1 ]
if [ "$n" = 1 ]; then
    t=$(traces "$out")
    c=$(field "$t" capture_complete)
    k=$(field "$t" kernels)
    check "capture_complete=$c is true" [ "$c" = true ]
    check "kernels $k > 0" [ "${k:-0}" -gt 0 ]
fi
finish sigint
