#!/usr/bin/env python3
"""Fans a `fikit-sim sweep --spec` out over a Ray cluster, one task per shard.

Every task runs the same binary on its shard:

    fikit-sim sweep --spec SPEC --shard K/N -o shard.parquet --threads T

and returns the shard's Parquet bytes through Ray's object store; the driver
writes them beside each other and joins them with `fikit-sim sweep merge`,
which checks that every shard is there exactly once. What travels how:

- the spec, the traces it names and the fikit-sim binary: by a shared path
  (the same absolute paths on every node: a network file system, or the same
  image). Nothing is uploaded.
- each shard's rows: back to the driver through the object store (a few
  hundred bytes per item).

A task that fails (a crashed worker, a node lost, fikit-sim exiting non-zero)
is retried up to --retries times; a shard that still fails stops the sweep
with fikit-sim's message.

    python3 scripts/ray/fikit_ray.py --spec SPEC --shards N -o merged.parquet \\
        [--address auto] [--fikit-sim PATH] [--threads-per-task T]
    python3 scripts/ray/fikit_ray.py ... --local-nodes 2   # a local test cluster

Exit codes: 0 success, 2 bad arguments, 1 a shard or the merge failed.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import ray


class ShardFailed(RuntimeError):
    """fikit-sim failed in a way a retry can fix (a crash, a signal, exit 1)."""


class BadInput(RuntimeError):
    """fikit-sim refused its input (exit 2): retrying cannot help."""


def run_shard_task(fikit_sim, spec, k, n, threads, fail_once_dir):
    """Runs shard k of n in a scratch folder; returns (k, Parquet bytes)."""
    # Test hook: FIKIT_RAY_FAIL_ONCE=K makes shard K's first try fail, so the
    # retry path is exercised (a marker file in a folder all tries share).
    if fail_once_dir and str(k) == os.environ.get("FIKIT_RAY_FAIL_ONCE"):
        marker = os.path.join(fail_once_dir, f"failed-{k}")
        if not os.path.exists(marker):
            open(marker, "w").close()
            raise ShardFailed(f"shard {k}/{n}: failing once on purpose (FIKIT_RAY_FAIL_ONCE)")
    with tempfile.TemporaryDirectory(prefix=f"fikit-shard-{k}-") as d:
        out = os.path.join(d, "rows.parquet")
        cmd = [fikit_sim, "sweep", "--spec", spec, "--shard", f"{k}/{n}",
               "-o", out, "--threads", str(threads)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            error = BadInput if r.returncode == 2 else ShardFailed
            raise error(f"shard {k}/{n}: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
        with open(out, "rb") as f:
            return k, f.read()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--spec", required=True, help="the sweep spec (JSON), on a path every node sees")
    p.add_argument("--shards", type=int, required=True, help="how many shards (tasks)")
    p.add_argument("-o", "--output", required=True, help="the merged table (Parquet)")
    p.add_argument("--fikit-sim", default=shutil.which("fikit-sim") or "target/release/fikit-sim",
                   help="the fikit-sim binary, on a path every node sees")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (e.g. auto); default: a local Ray")
    p.add_argument("--local-nodes", type=int, default=0,
                   help="start a local test cluster of this many one-CPU nodes instead")
    p.add_argument("--threads-per-task", type=int, default=1,
                   help="CPUs each task asks for and fikit-sim threads it runs")
    p.add_argument("--retries", type=int, default=3, help="tries after a failure, per shard")
    p.add_argument("--keep-shards", default=None, help="also keep the shard files in this folder")
    a = p.parse_args(argv)
    if a.shards < 1:
        p.error("--shards must be at least 1")
    if a.threads_per_task < 1:
        p.error("--threads-per-task must be at least 1")
    spec = os.path.abspath(a.spec)
    fikit_sim = os.path.abspath(a.fikit_sim)
    for what, path in (("--spec", spec), ("--fikit-sim", fikit_sim)):
        if not os.path.exists(path):
            p.error(f"{what} {path}: no such file")

    cluster = None
    if a.local_nodes:
        from ray.cluster_utils import Cluster
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": a.threads_per_task, "include_dashboard": False,
            "object_store_memory": 80 * 1024 * 1024})
        for _ in range(a.local_nodes - 1):
            cluster.add_node(num_cpus=a.threads_per_task, object_store_memory=80 * 1024 * 1024)
        ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    else:
        ray.init(address=a.address, include_dashboard=False, logging_level="ERROR",
                 log_to_driver=False)
    alive = [n for n in ray.nodes() if n["Alive"]]
    nodes = len(alive)
    most = max((n["Resources"].get("CPU", 0) for n in alive), default=0)
    if most < a.threads_per_task:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        print(f"fikit_ray: error: --threads-per-task {a.threads_per_task}: no node has that many "
              f"CPUs (the largest has {most:g})", file=sys.stderr)
        return 2
    # Retried: lost workers and nodes (max_retries) and fikit-sim failures a
    # retry can fix; not bad input (exit 2), which fails the same every time.
    task = ray.remote(num_cpus=a.threads_per_task, max_retries=a.retries,
                      retry_exceptions=[ShardFailed])(run_shard_task)
    fail_dir = tempfile.mkdtemp(prefix="fikit-ray-")
    t0 = time.monotonic()
    pending = [task.remote(fikit_sim, spec, k, a.shards, a.threads_per_task, fail_dir)
               for k in range(1, a.shards + 1)]
    print(f"fikit_ray: {a.shards} shards on {nodes} nodes", file=sys.stderr)
    out_dir = a.keep_shards or tempfile.mkdtemp(prefix="fikit-shards-")
    os.makedirs(out_dir, exist_ok=True)
    files = []
    code = 0
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            k, data = ray.get(done[0])
            path = os.path.join(out_dir, f"shard-{k}-of-{a.shards}.parquet")
            with open(path, "wb") as f:
                f.write(data)
            files.append(path)
            print(f"fikit_ray: {len(files)}/{a.shards} shards done "
                  f"({time.monotonic() - t0:.1f} s)", file=sys.stderr)
    except ray.exceptions.RayError as e:
        cause = getattr(e, "cause", None) or e
        print(f"fikit_ray: error (after retries): {cause}", file=sys.stderr)
        code = 2 if isinstance(cause, BadInput) else 1
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(fail_dir, ignore_errors=True)
    try:
        if code:
            return code
        t1 = time.monotonic()
        r = subprocess.run([fikit_sim, "sweep", "merge", "-o", a.output, *sorted(files)])
        if r.returncode != 0:
            return 1
        print(f"fikit_ray: shards {t1 - t0:.1f} s, merge {time.monotonic() - t1:.2f} s",
              file=sys.stderr)
        return 0
    finally:
        if not a.keep_shards:
            shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
