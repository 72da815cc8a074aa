#!/usr/bin/env python3
"""Copy a metrics pass's figures (the metric_* columns of a trace written by
`fikit-profile --metrics`) into another trace of the same program, by kernel
key: every kernel row of a key the pass measured gets its figures; the rest
stay null. For profiles recorded without the pass (the validation set's) and a
short `--metrics` run of the same command: kernel keys are stable across runs
of a program on one GPU model. The file's metadata is kept; the result reads
as a trace with metrics (fikit-sim validates it on reading).

    lab/validate/attach-metrics.py METRICS_TRACE TRACE OUT_TRACE

Prints how many of TRACE's kernel keys, and of its kernel time, got figures.
Needs polars and pyarrow. Exit 2 on bad input.
"""
import sys

import polars as pl
import pyarrow.parquet as pq

COLUMNS = ["metric_dram_read_bytes", "metric_dram_write_bytes", "metric_sm_issue_bp", "metric_l2_bytes"]


def main(argv):
    if len(argv) != 4 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dst, out = argv[1:]
    try:
        m = pl.read_parquet(src)
        t = pq.read_table(dst)
        # The file's own key-value metadata (fikit.*), not the Arrow schema's.
        kv = {k: v for k, v in (pq.read_metadata(dst).metadata or {}).items() if k != b"ARROW:schema"}
    except Exception as e:  # noqa: BLE001 - any read failure is bad input
        print(f"cannot read: {e}", file=sys.stderr)
        return 2
    have = [c for c in COLUMNS if c in m.columns]
    if "metric_dram_read_bytes" not in have:
        print(f"{src}: no metric_* columns (profile with --metrics)", file=sys.stderr)
        return 2
    if any(c in t.column_names for c in COLUMNS):
        print(f"{dst}: already has metric_* columns", file=sys.stderr)
        return 2
    figures = (
        m.filter((pl.col("kind") == "kernel") & pl.col("metric_dram_read_bytes").is_not_null())
        .select(["kernel_key"] + have)
        .unique(subset="kernel_key", keep="first")
    )
    d = pl.from_arrow(t)
    # Row order is kept: a left join on a column with unique keys.
    d = d.with_row_index("__row").join(figures, on="kernel_key", how="left").sort("__row").drop("__row")
    not_kernel = pl.col("kind") != "kernel"
    d = d.with_columns([pl.when(not_kernel).then(None).otherwise(pl.col(c)).alias(c) for c in have])
    types = {"metric_sm_issue_bp": pl.UInt32}
    d = d.with_columns([pl.col(c).cast(types.get(c, pl.UInt64)) for c in have])
    table = d.to_arrow().replace_schema_metadata(kv)
    pq.write_table(table, out, compression="zstd")
    k = d.filter(pl.col("kind") == "kernel").with_columns(dur=(pl.col("end_ns") - pl.col("start_ns")).cast(pl.Float64))
    keys = k["kernel_key"].n_unique()
    got = k.filter(pl.col("metric_dram_read_bytes").is_not_null())
    print(f"{out}: figures for {got['kernel_key'].n_unique()} of {keys} kernel keys, {got['dur'].sum() / k['dur'].sum():.1%} of the kernel time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
