#!/usr/bin/env python3
"""How a job's own kernels slow beside a load of known share: the
sensitivity pass's two traces of one program (lab/validate/sensitivity.sh:
ALONE and BESIDE, both under MPS), matched by kernel key. The first fifth of
each trace's kernels (model load, warm-up) is left out. Per key: the median
duration alone and beside, their ratio (the stretch) and `(stretch - 1) /
SHARE`, the concurrent-kernel slowdown per unit of share that the model's
`1 + c o` would need for that key; for the job, the same over its kernel
time (sum over keys of count x median). With --top N, the N keys of most
kernel time alone, one line each. With --traced SMALL_CORUN PARTNER_CORUN
(both jobs' traces of one real co-run, `fikit-run scenario --trace`), each
key's stretch where a partner kernel overlapped it wholly, beside its stretch
here, and the rank correlation of the two.

    /tmp/hs/bin/python lab/analysis/sensitivity.py ALONE BESIDE SHARE [--top N] [--traced SMALL_CORUN PARTNER_CORUN]

Needs polars, pyarrow and numpy, and corun-pair.py beside it. Exit 2 on bad
input.
"""
import importlib.util
import os
import sys

import numpy as np
import polars as pl

_spec = importlib.util.spec_from_file_location("corun_pair", os.path.join(os.path.dirname(__file__), "corun-pair.py"))
corun_pair = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corun_pair)


def kernels(path):
    t = pl.read_parquet(path).filter(pl.col("kind") == "kernel").sort("start_ns")
    if t.height == 0:
        raise ValueError(f"{path}: no kernels")
    return t.with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("d"))


def steady(t):
    return t.slice(t.height // 5)


def by_key(t, name):
    return t.group_by("kernel_key").agg(
        pl.col("d").median().alias(name),
        pl.len().alias(f"n_{name}"),
        pl.col("name").first(),
    )


def ranks(x):
    return np.argsort(np.argsort(x))


def main(argv):
    args = argv[1:]
    top, traced = 0, None
    try:
        if "--top" in args:
            i = args.index("--top")
            top = int(args[i + 1])
            del args[i : i + 2]
        if "--traced" in args:
            i = args.index("--traced")
            traced = args[i + 1 : i + 3]
            if len(traced) != 2:
                raise ValueError
            del args[i : i + 3]
        alone_path, beside_path, share = args
        share = float(share)
        if not 0 < share <= 1:
            raise ValueError
    except (ValueError, IndexError):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        alone = steady(kernels(alone_path))
        beside = steady(kernels(beside_path))
    except Exception as e:  # noqa: BLE001 - any read failure is bad input
        print(f"cannot read: {e}", file=sys.stderr)
        return 2
    j = by_key(alone, "alone").join(by_key(beside, "beside").drop("name"), on="kernel_key")
    if j.height == 0:
        print(f"{alone_path} and {beside_path} share no kernel key: not the same program", file=sys.stderr)
        return 2
    j = j.with_columns(
        (pl.col("beside") / pl.col("alone")).alias("stretch"),
        (pl.col("alone") * pl.col("n_alone")).alias("time"),
    )
    total_alone = float(alone["d"].sum())
    cover = float(j["time"].sum()) / max(float(by_key(alone, "m").select(pl.col("m") * pl.col("n_m")).sum().item()), 1)
    t_alone = float((j["alone"] * j["n_alone"]).sum())
    t_beside = float((j["beside"] * j["n_alone"]).sum())
    ratio = t_beside / t_alone
    print(
        f"{alone_path}: {j.height} kernel keys in both, {cover:.3f} of the kernel time alone "
        f"({total_alone / 1e6:.1f} ms); beside the load of share {share}: {ratio:.2f}x, "
        f"per unit of share {(ratio - 1) / share:.2f}"
    )
    for r in j.sort("time", descending=True).head(top).iter_rows(named=True):
        print(
            f"  {r['stretch']:5.2f}x  {r['alone'] / 1e3:8.1f} us alone  x{r['n_alone']:<6d} {r['name'][:70]}"
        )
    if traced:
        try:
            small, partner = kernels(traced[0]), kernels(traced[1])
        except Exception as e:  # noqa: BLE001
            print(f"cannot read: {e}", file=sys.stderr)
            return 2
        ov = corun_pair.covered(
            small["start_ns"].to_numpy(),
            small["end_ns"].to_numpy(),
            partner["start_ns"].to_numpy(),
            partner["end_ns"].to_numpy(),
        )
        small = steady(small.with_columns(pl.Series("ov", ov)))
        real = small.filter(pl.col("ov") > 0.99).group_by("kernel_key").agg(
            pl.col("d").median().alias("co"), pl.len().alias("n_co")
        )
        k = j.join(real, on="kernel_key").filter(pl.col("n_co") >= 20)
        if k.height < 3:
            print("the co-run has fewer than 3 keys wholly overlapped 20 times or more", file=sys.stderr)
            return 2
        w = k["time"].to_numpy().astype(float)
        rs = (k["co"] / k["alone"]).to_numpy()
        hs = k["stretch"].to_numpy()
        rho = np.corrcoef(ranks(hs), ranks(rs))[0, 1]
        print(
            f"co-run, {k.height} keys wholly overlapped (>= 20 times): real {np.average(rs, weights=w):.2f}x, "
            f"here {np.average(hs, weights=w):.2f}x (time-weighted); rank correlation per key {rho:+.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
