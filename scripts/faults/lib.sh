# Helpers shared by the fault scripts (sourced). Each fault script runs with
#   FIKIT_PROFILE  fikit-profile binary      FIKIT_SIM  fikit-sim binary
#   FIKIT_COLLECTOR  the collector library   WORK  an empty folder of its own
#   PYTHON  python3 with torch (default python3)
# and ends by printing one line: `PASS|FAIL|SKIP <fault>: <facts>`.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
WORKLOAD="$HERE/workload.py"
FACTS=()
FAILED=0

: "${FIKIT_PROFILE:?set FIKIT_PROFILE}" "${FIKIT_SIM:?set FIKIT_SIM}" "${WORK:?set WORK}"
mkdir -p "$WORK"

# fact TEXT: a fact observed, for the summary line.
fact() { FACTS+=("$*"); echo "fact: $*"; }
# check NAME CONDITION...: records NAME as ok or FAILED (the condition is a test command).
check() {
    local name="$1"; shift
    if "$@"; then fact "$name ok"; else fact "$name FAILED"; FAILED=1; fi
}
# finish FAULT: prints the summary line and exits 0 on PASS, 1 on FAIL.
finish() {
    local facts
    facts=$(printf '%s; ' "${FACTS[@]}")
    facts="${facts%; }"
    if [ "$FAILED" = 0 ]; then echo "PASS $1: $facts"; exit 0; fi
    echo "FAIL $1: $facts"; exit 1
}
skip() { echo "SKIP $1: $2"; exit 0; }

# traces DIR: the trace files directly in DIR, one per line, sorted.
traces() { find "$1" -maxdepth 1 -name '*.parquet' | sort; }
# count_traces DIR
count_traces() { traces "$1" | grep -c . || true; }

# field FILE KEY: a field of `fikit-sim inspect --format json FILE` (one trace):
# kernels, memops, capture_complete, dropped_records, job, ...
field() {
    "$FIKIT_SIM" inspect --format json "$1" 2>>"$WORK/inspect.err" | "$PYTHON" -c '
import json, sys
v = json.load(sys.stdin)[0][sys.argv[1]]
print(str(v).lower() if isinstance(v, bool) else v)' "$2"
}

# wait_for_file PATH SECONDS: 0 once PATH exists, 1 after SECONDS.
wait_for_file() {
    local deadline=$((SECONDS + $2))
    while [ ! -s "$1" ]; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

# wait_pid PID SECONDS: waits for background job PID (a child of this shell),
# killing it after SECONDS; sets STATUS to its exit status (or "timeout").
wait_pid() {
    local pid="$1" deadline=$((SECONDS + $2))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            STATUS=timeout
            return 1
        fi
        sleep 0.1
    done
    wait "$pid"
    STATUS=$?
}

# profile OUT LOG ARGS... : fikit-profile -q -o OUT ARGS (in the foreground,
# at most 120 s); sets STATUS.
profile() {
    local out="$1" log="$2"; shift 2
    timeout -k 5 120 "$FIKIT_PROFILE" -q -o "$out" "$@" >"$log" 2>&1
    STATUS=$?
}

# same A B: true when A is not empty and equals B.
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
