#!/usr/bin/env bash
# Fault (d): a launcher (a bash script) that starts 2 CUDA processes at once
# (30 and 60 steps). Expected: exit 0, two traces named after the two python
# pids (none for bash), each with the kernel count the same workload gets
# when profiled alone (nothing lost or duplicated).
source "$(dirname "$0")/lib.sh"
declare -A solo
for n in 30 60; do
    out="$WORK/solo-$n" done="$WORK/solo-$n.json"
    profile "$out" "$WORK/solo-$n.log" --name solo -- \
        "$PYTHON" "$WORKLOAD" --iters "$n" --done-file "$done"
    check "alone, $n steps: exit $STATUS = 0" [ "$STATUS" = 0 ]
    t=$(traces "$out" | head -1)
    solo[$n]=$([ -n "$t" ] && field "$t" kernels)
    fact "alone, $n steps: ${solo[$n]:-no trace} kernels"
done
cat >"$WORK/launcher.sh" <<LAUNCH
#!/usr/bin/env bash
"$PYTHON" "$WORKLOAD" --iters 30 --done-file "$WORK/pair-30.json" &
"$PYTHON" "$WORKLOAD" --iters 60 --done-file "$WORK/pair-60.json" &
wait
LAUNCH
out="$WORK/pair"
profile "$out" "$WORK/pair.log" --name pair -- bash "$WORK/launcher.sh"
check "both at once: exit $STATUS = 0" [ "$STATUS" = 0 ]
n=$(count_traces "$out")
check "traces $n = 2" [ "$n" = 2 ]
for k in 30 60; do
    pid=$(grep -o '"pid": [0-9]*' "$WORK/pair-$k.json" 2>/dev/null | cut -d' ' -f2)
    t="$out/pair-${pid:-x}.parquet"
    if [ -f "$t" ]; then
        got=$(field "$t" kernels)
        check "$k-step process (pid $pid): kernels $got = ${solo[$k]:-?} as alone" \
            same "$got" "${solo[$k]:-}"
        c=$(field "$t" capture_complete)
        check "$k-step process: capture_complete=$c" [ "$c" = true ]
    else
        check "$k-step process (pid ${pid:-?}) has a trace pair-${pid:-?}.parquet" false
    fi
done
finish two-procs
