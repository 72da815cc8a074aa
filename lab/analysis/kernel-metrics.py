#!/usr/bin/env python3
"""The metrics pass's figures in a trace (`fikit-profile --metrics`), one line
per measured kernel key: its kernel's name, launches and median duration in
the trace, DRAM bytes read and written (MiB), SM issue rate (% of peak while active), and
the DRAM bandwidth those bytes make over the median duration (GB/s).

    lab/analysis/kernel-metrics.py TRACE.parquet [--top N]

Needs polars.
"""
import sys

import polars as pl


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = 40
    if "--top" in argv:
        top = int(argv[argv.index("--top") + 1])
    try:
        df = pl.read_parquet(argv[1])
    except Exception as e:  # noqa: BLE001 - any read failure is bad input
        print(f"{argv[1]}: cannot read: {e}", file=sys.stderr)
        return 2
    if "metric_dram_read_bytes" not in df.columns:
        print(f"{argv[1]}: no metrics columns (profile with --metrics)", file=sys.stderr)
        return 2
    if "metric_l2_bytes" not in df.columns:  # files from before the L2 figure
        df = df.with_columns(pl.lit(None, dtype=pl.UInt64).alias("metric_l2_bytes"))
    k = df.filter(pl.col("kind") == "kernel").with_columns(
        (pl.col("end_ns") - pl.col("start_ns")).alias("dur")
    )
    g = (
        k.group_by("kernel_key")
        .agg(
            pl.col("demangled_name").first().str.slice(0, 60).alias("name"),
            pl.len().alias("launches"),
            pl.col("dur").median().alias("median_ns"),
            pl.col("metric_dram_read_bytes").first().alias("read"),
            pl.col("metric_dram_write_bytes").first().alias("write"),
            pl.col("metric_sm_issue_bp").first().alias("sm_bp"),
            pl.col("metric_l2_bytes").first().alias("l2"),
        )
        .with_columns(
            (pl.col("read") / 2**20).round(2).alias("read_mib"),
            (pl.col("write") / 2**20).round(2).alias("write_mib"),
            (pl.col("sm_bp") / 100).alias("sm_pct"),
            (pl.col("l2") / 2**20).round(2).alias("l2_mib"),
            ((pl.col("read") + pl.col("write")) / pl.col("median_ns")).round(1).alias("gb_s"),
        )
        .sort("median_ns", descending=True)
    )
    measured = g.filter(pl.col("read").is_not_null())
    print(f"{argv[1]}: {measured.height} of {g.height} kernel keys measured")
    with pl.Config(tbl_rows=top, tbl_width_chars=200, fmt_str_lengths=60):
        print(
            measured.select(
                "name", "launches", "median_ns", "read_mib", "write_mib", "l2_mib", "sm_pct", "gb_s"
            ).head(top)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
