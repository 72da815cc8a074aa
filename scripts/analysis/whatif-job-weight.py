#!/usr/bin/env python3
"""A what-if, not a product path: give every kernel of one profile the same
weight in the MPS model's concurrent-kernel slowdown (how hard it presses on
other jobs' kernels, 0 to 1), through the columns `corun_weight` reads
(simulator/src/sim/gpu.rs): DRAM bytes 0 and the SM issue rate set to the
weight, so that with a non-empty `corun_load_traffic` in the model the
kernel's weight is the weight given. `none` drops the metric columns (the
kernel presses fully). The file's fikit.* metadata is kept.

    /tmp/hs/bin/python scripts/analysis/whatif-job-weight.py TRACE OUT_TRACE WEIGHT|none

Needs pyarrow. Exit 2 on bad input.
"""
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

METRICS = ["metric_dram_read_bytes", "metric_dram_write_bytes", "metric_sm_issue_bp", "metric_l2_bytes"]


def main(argv):
    if len(argv) != 4 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dst, w = argv[1:]
    try:
        weight = None if w == "none" else float(w)
        if weight is not None and not 0 <= weight <= 1:
            raise ValueError(f"weight {w}: must be in [0, 1] or none")
        t = pq.read_table(src)
        kv = {k: v for k, v in (pq.read_metadata(src).metadata or {}).items() if k != b"ARROW:schema"}
    except Exception as e:  # noqa: BLE001 - any failure here is bad input
        print(f"cannot use it: {e}", file=sys.stderr)
        return 2
    t = t.drop_columns([c for c in METRICS if c in t.column_names])
    if weight is not None:
        n = t.num_rows
        kernel = pc.equal(t["kind"].cast(pa.string()), "kernel")
        zero = pa.array([0] * n, pa.uint64())
        issue = pa.array([round(weight * 10000)] * n, pa.uint32())
        t = t.append_column(METRICS[0], pc.if_else(kernel, zero, pa.nulls(n, pa.uint64())))
        t = t.append_column(METRICS[1], pc.if_else(kernel, zero, pa.nulls(n, pa.uint64())))
        t = t.append_column(METRICS[2], pc.if_else(kernel, issue, pa.nulls(n, pa.uint32())))
    pq.write_table(t.replace_schema_metadata(kv), dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
