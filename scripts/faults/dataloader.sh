#!/usr/bin/env bash
# Fault (c): a program whose torch DataLoader forks 2 worker processes (fork
# start method, after the main process initialized CUDA); the workers touch
# no CUDA. Run twice. Expected each time: exit 0 within the time limit (no
# hang), exactly one trace, that of the main process (not of a worker), and
# the same kernel and copy counts in both runs (nothing lost or duplicated).
source "$(dirname "$0")/lib.sh"
declare -A kernels memops
for run in 1 2; do
    out="$WORK/traces-$run" done="$WORK/done-$run.json"
    profile "$out" "$WORK/profile-$run.log" --name loader -- \
        "$PYTHON" "$WORKLOAD" --iters 40 --loader-workers 2 --done-file "$done"
    check "run $run: exit $STATUS = 0" [ "$STATUS" = 0 ]
    workers=$(grep -o 'worker [0-9]*' "$WORK/profile-$run.log" | cut -d' ' -f2 | tr '\n' ' ')
    main=$(grep -o '"pid": [0-9]*' "$done" 2>/dev/null | cut -d' ' -f2)
    fact "run $run: main pid ${main:-?}, worker pids ${workers:-none seen}"
    n=$(count_traces "$out")
    check "run $run: traces $n = 1" [ "$n" = 1 ]
    check "run $run: the trace is the main process's (loader-${main:-?}.parquet)" \
        [ -f "$out/loader-${main:-x}.parquet" ]
    if [ "$n" = 1 ]; then
        t=$(traces "$out")
        kernels[$run]=$(field "$t" kernels)
        memops[$run]=$(field "$t" memops)
        check "run $run: kernels ${kernels[$run]} > 0" [ "${kernels[$run]:-0}" -gt 0 ]
    fi
done
check "kernels equal across runs (${kernels[1]:-?} = ${kernels[2]:-?})" \
    same "${kernels[1]:-}" "${kernels[2]:-}"
check "copies and memsets equal across runs (${memops[1]:-?} = ${memops[2]:-?})" \
    same "${memops[1]:-}" "${memops[2]:-}"
finish dataloader
