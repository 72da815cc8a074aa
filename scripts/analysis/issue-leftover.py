#!/usr/bin/env python3
"""A what-if rule for MPS beside a busy job, tried against the real per-key
slowdowns: a kernel gets only the issue slots its partner's warps leave (the
compute-bound corun probe's cliff: the older, resident warps issue first),
so it stretches by max(1, u / (1 - u_partner)), u the kernel's own issue
rate alone and u_partner each of the partner's kernels' (`fikit-profile
--metrics`), averaged over the partner's kernel time. Printed beside the real
time-weighted slowdown (the job's trace beside the partner under MPS over its
trace alone under MPS) with the rank correlation per key.

    /tmp/hs/bin/python scripts/analysis/issue-leftover.py ALONE BESIDE JOB_METRICS PARTNER_METRICS

e.g. traces/h200-corun/bert-base-mps-alone-735.parquet,
traces/h200-corun/bert-base-mps-895.parquet,
reports/metrics/h100-2026-11-26/bertb1-3017.parquet,
reports/metrics/h100-2026-11-26/r50b128-3237.parquet.
"""
import statistics
import sys

import polars as pl


def kernels(path):
    return pl.read_parquet(path).filter(pl.col("kind") == "kernel").with_columns(
        (pl.col("end_ns") - pl.col("start_ns")).alias("dur")
    )


def issue(path):
    return (
        kernels(path)
        .filter(pl.col("metric_sm_issue_bp").is_not_null())
        .group_by("kernel_key")
        .agg((pl.col("metric_sm_issue_bp").first() / 1e4).alias("u"))
    )


def main(argv):
    if len(argv) != 5:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    alone, beside, job_m, partner_m = argv[1:]
    a = kernels(alone).group_by("kernel_key").agg(pl.col("dur").median().alias("alone"), pl.len().alias("n"))
    b = kernels(beside).group_by("kernel_key").agg(pl.col("dur").median().alias("beside"))
    g = a.join(b, on="kernel_key").join(issue(job_m), on="kernel_key")
    g = g.with_columns((pl.col("beside") / pl.col("alone")).alias("real"))
    p = kernels(partner_m).group_by("kernel_key").agg(pl.col("dur").sum().alias("t")).join(issue(partner_m), on="kernel_key")
    w = [t / p["t"].sum() for t in p["t"]]
    up = p["u"].to_list()
    print(f"{partner_m}: time-weighted issue rate {sum(x * y for x, y in zip(w, up)):.2f} over {p.height} keys")

    def rule(u):
        return sum(wi * max(1.0, u / max(1e-3, 1 - ui)) for wi, ui in zip(w, up))

    g = g.with_columns(pl.col("u").map_elements(rule, return_dtype=pl.Float64).alias("rule"))
    weight = g["alone"] * g["n"]

    def tw(col):
        return (g[col] * weight).sum() / weight.sum()

    rho = statistics.correlation(g["rule"].rank().to_list(), g["real"].rank().to_list())
    print(
        f"{beside}: {g.height} keys; time-weighted real {tw('real'):.2f}x, the rule while the partner "
        f"runs {tw('rule'):.2f}x; rank correlation per key {rho:+.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
