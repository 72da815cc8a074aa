#!/usr/bin/env python3
"""How much a job stretches the GEMM victim's kernels under MPS, from the
pass of lab/validate/pressure.sh with KIND=gemm (DIR/JOB-PID.parquet and
DIR/victim-PID.parquet per job). Issue 15: a victim shaped like the batch-1
jobs' own kernels, to set beside how those kernels stretch beside the same
partner for real.

Per job: the victim's kernels before the job's first kernel (alone) against
those inside the job's kernel span after its first fifth (model load and
warm-up left out), per kernel shape (name and grid) the median duration;
then the same for the victim's kernels the job's kernels overlapped wholly
(99% of their time or more). The figure per job is the shapes' medians
weighted by their count alone: sum(n x median beside) / sum(n x median
alone).

    /tmp/hs/bin/python lab/analysis/gemm-pressure.py DIR [DIR ...]
"""
import glob
import importlib.util
import sys
from pathlib import Path

import polars as pl

# corun-pair.py's covered(): the share of each span the union of others covers.
_spec = importlib.util.spec_from_file_location("corun_pair", Path(__file__).with_name("corun-pair.py"))
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)


def kernels(path):
    return (
        pl.read_parquet(path)
        .filter(pl.col("kind") == "kernel")
        .sort("start_ns")
        .with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("dur"))
    )


def figure(alone, beside):
    a = alone.group_by(["name", "grid_x", "grid_y"]).agg(pl.len().alias("n"), pl.col("dur").median().alias("a"))
    b = beside.group_by(["name", "grid_x", "grid_y"]).agg(pl.len().alias("m"), pl.col("dur").median().alias("b"))
    j = a.join(b, on=["name", "grid_x", "grid_y"])
    if j.height == 0:
        return float("nan"), 0
    return (j["n"] * j["b"]).sum() / (j["n"] * j["a"]).sum(), int(j["m"].sum())


def main(dirs):
    if not dirs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("job          victim alone   beside: kernels  stretch   wholly overlapped: kernels  stretch")
    for d in dirs:
        vs = glob.glob(f"{d}/victim-*.parquet")
        js = [p for p in glob.glob(f"{d}/*.parquet") if "/victim-" not in p]
        if len(vs) != 1 or len(js) != 1:
            print(f"{d}: expected one victim trace and one job trace", file=sys.stderr)
            return 2
        v, j = kernels(vs[0]), kernels(js[0])
        job = js[0].rsplit("/", 1)[1].rsplit("-", 1)[0]
        j_steady = j.slice(j.height // 5)
        t0, t1 = j_steady["start_ns"].min(), j_steady["end_ns"].max()
        alone = v.filter(pl.col("end_ns") < j["start_ns"].min())
        alone = alone.slice(alone.height // 5)  # the victim's own warm-up
        beside = v.filter((pl.col("start_ns") >= t0) & (pl.col("end_ns") <= t1))
        cov = cp.covered(beside["start_ns"].to_numpy(), beside["end_ns"].to_numpy(), j["start_ns"].to_numpy(), j["end_ns"].to_numpy())
        whole = beside.filter(pl.Series(cov >= 0.99))
        s, n = figure(alone, beside)
        sw, nw = figure(alone, whole)
        print(f"{job:12} {alone.height:12}   {n:15}  {s:6.2f}x   {nw:26}  {sw:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
