#!/usr/bin/env python3
"""How much MPS slows each kernel of a job beside a busy one, by kernel key:
the job's trace under MPS beside the busy job against its trace under MPS
alone (traces/h200-corun/*-mps-* and *-mps-alone-*), median duration per
key, time-weighted over the launches, grouped by the kernel's duration alone
and by its blocks. A slowdown that followed size would be a rule on the
trace's launch shapes; one that does not needs what the kernel does to
memory (issue 15's per-kernel interference).

    python3 -m venv /tmp/hs && /tmp/hs/bin/pip install polars
    /tmp/hs/bin/python lab/analysis/mps-kernel-slowdown.py ALONE.parquet BESIDE.parquet [METRICS.parquet]

With METRICS.parquet (a trace of the same job profiled with
`fikit-profile --metrics`, its figures joined by kernel key) the keys are
also grouped by the DRAM bandwidth their bytes make over their duration
alone (GB/s), by their SM issue rate (% of peak while active) and by their
L2 traffic over their duration alone (GB/s; files from before the L2 figure
have none), with the rank
correlation (Spearman) of each against the slowdown.

With `--partner PARTNER_METRICS.parquet` as well (the busy job profiled with
`fikit-profile --metrics`), a what-if rule is set beside the real slowdown:
a kernel gets only the issue slots its partner's warps leave (the
compute-bound corun probe's cliff: the older, resident warps issue first),
so it stretches by max(1, u / (1 - u_partner)), u its own issue rate alone
and u_partner each of the partner's kernels', averaged over the partner's
kernel time; printed time-weighted, with its rank correlation per key.
"""
import sys

import polars as pl

GROUPS = [
    ("µs alone", "alone", [0, 3e3, 6e3, 12e3, 25e3, 50e3, 1e12], 1e3),
    ("blocks", "blocks", [0, 8, 33, 133, 529, 2113, 1e12], 1),
]


def kernels(path):
    return (
        pl.read_parquet(path)
        .filter(pl.col("kind") == "kernel")
        .with_columns(
            (pl.col("end_ns") - pl.col("start_ns")).alias("dur"),
            (pl.col("grid_x") * pl.col("grid_y") * pl.col("grid_z")).alias("blocks"),
        )
    )


METRIC_GROUPS = [
    ("DRAM GB/s alone", "gb_s", [0, 50, 200, 500, 1000, 2000, 1e12], 1),
    ("SM issue %", "sm_pct", [0, 10, 25, 50, 75, 101], 1),
    ("L2 GB/s alone", "l2_gb_s", [0, 50, 200, 500, 1000, 2000, 5000, 1e12], 1),
]


def spearman(a, b):
    """Rank correlation of two equal-length series (average ranks for ties)."""
    ra = a.rank("average")
    rb = b.rank("average")
    return pl.DataFrame({"a": ra, "b": rb}).select(pl.corr("a", "b")).item()


def weighted(df):
    return (df["beside"] * df["n"]).sum() / (df["alone"] * df["n"]).sum()


def leftover_rule(partner_path):
    """The issue-leftover stretch of a kernel of issue rate `u` (a fraction),
    over the partner's kernels weighted by their time in its trace."""
    p = (
        kernels(partner_path)
        .filter(pl.col("metric_sm_issue_bp").is_not_null())
        .group_by("kernel_key")
        .agg(pl.col("dur").sum().alias("t"), (pl.col("metric_sm_issue_bp").first() / 1e4).alias("u"))
    )
    total = p["t"].sum()
    parts = [(t / total, u) for t, u in zip(p["t"], p["u"])]
    mean_u = sum(w * u for w, u in parts)
    print(f"{partner_path}: time-weighted issue rate {mean_u:.2f} over {p.height} keys")
    return lambda u: sum(w * max(1.0, u / max(1e-3, 1 - up)) for w, up in parts)


def main(argv):
    argv = list(argv)
    partner = None
    if "--partner" in argv:
        i = argv.index("--partner")
        if i + 1 >= len(argv):
            print(__doc__.strip(), file=sys.stderr)
            return 2
        partner = argv.pop(i + 1)
        argv.pop(i)
    if len(argv) not in (3, 4) or (partner and len(argv) != 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    alone = kernels(argv[1]).group_by("kernel_key").agg(
        pl.col("dur").median().alias("alone"), pl.col("blocks").first(), pl.len().alias("n")
    )
    beside = kernels(argv[2]).group_by("kernel_key").agg(pl.col("dur").median().alias("beside"))
    g = alone.join(beside, on="kernel_key").with_columns((pl.col("beside") / pl.col("alone")).alias("slow"))
    groups = list(GROUPS)
    if len(argv) == 4:
        m = pl.read_parquet(argv[3])
        if "metric_dram_read_bytes" not in m.columns:
            print(f"{argv[3]}: no metrics columns (profile with --metrics)", file=sys.stderr)
            return 2
        if "metric_l2_bytes" not in m.columns:  # files from before the L2 figure
            m = m.with_columns(pl.lit(None, dtype=pl.UInt64).alias("metric_l2_bytes"))
        m = (
            m.filter(pl.col("kind") == "kernel")
            .filter(pl.col("metric_dram_read_bytes").is_not_null())
            .group_by("kernel_key")
            .agg(
                (pl.col("metric_dram_read_bytes") + pl.col("metric_dram_write_bytes")).first().alias("dram"),
                (pl.col("metric_sm_issue_bp").first() / 100).alias("sm_pct"),
                pl.col("metric_l2_bytes").first().alias("l2"),
            )
        )
        before = g.height
        g = g.join(m, on="kernel_key").with_columns(
            (pl.col("dram") / pl.col("alone")).alias("gb_s"),
            (pl.col("l2") / pl.col("alone")).alias("l2_gb_s"),
        )
        print(f"{argv[3]}: figures for {g.height} of the {before} keys")
        for label, col in (("DRAM GB/s alone", "gb_s"), ("SM issue", "sm_pct"), ("L2 GB/s alone", "l2_gb_s")):
            if g[col].null_count() == g.height:
                print(f"  no {label} figures (not measured in the pass)")
                continue
            print(f"  rank correlation of the slowdown with {label}: {spearman(g[col], g['slow']):+.2f}")
        groups += [x for x in METRIC_GROUPS if g[x[1]].null_count() < g.height]
        if partner:
            rule = leftover_rule(partner)
            g = g.with_columns(
                (pl.col("sm_pct") / 100).map_elements(rule, return_dtype=pl.Float64).alias("rule")
            )
            time = g["alone"] * g["n"]
            print(
                f"  the issue-leftover rule while the partner runs: {(g['rule'] * time).sum() / time.sum():.2f}x "
                f"time-weighted; rank correlation per key with the slowdown {spearman(g['rule'], g['slow']):+.2f}"
            )
    print(
        f"{argv[2]}: {g.height} kernel keys, {g['n'].sum()} launches; time-weighted slowdown {weighted(g):.2f}x; "
        f"per key {g['slow'].min():.2f}-{g['slow'].max():.2f}x"
    )
    for label, col, edges, unit in groups:
        parts = []
        for lo, hi in zip(edges, edges[1:]):
            s = g.filter((pl.col(col) >= lo) & (pl.col(col) < hi))
            if s.height:
                parts.append(f"[{lo / unit:g}, {hi / unit:g}) {s.height} keys {weighted(s):.2f}x")
        print(f"  by {label}: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
