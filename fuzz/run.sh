#!/usr/bin/env bash
# Runs fuzz targets one after another for SECONDS each (default 600), at low
# priority, one process (the machine is shared), with the seeds in seeds/TARGET
# and the growing corpus in corpus/TARGET. Logs: fuzz/logs/TARGET.log (the
# last `#N DONE` line has the executions; `corpus:` the corpus size).
#   fuzz/run.sh [SECONDS] [TARGET...]      (default: trace_reader scenario spool)
# FUZZ_ARGS: more libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1" to run the
# whole time past known crashes, recording each in artifacts/TARGET/.
set -u
cd "$(dirname "$0")"
secs="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trace_reader scenario spool)
mkdir -p logs
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    echo "== $t: $secs s, started $(date -u +%H:%M:%S)"
    nice cargo +nightly fuzz run -O -s none "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
        ${FUZZ_ARGS:-} >"logs/$t.log" 2>&1
    echo "   exit $?; $(grep -E '^#[0-9]+ +DONE' "logs/$t.log" | tail -1)"
    ls artifacts/"$t" 2>/dev/null | sed 's/^/   artifact: /'
done
