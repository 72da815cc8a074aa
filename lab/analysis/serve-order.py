#!/usr/bin/env python3
"""A server's p99 alone from its characterization's untraced runs, as a
single-server queue (Lindley) fed by the set's Poisson arrivals: each run's
requests served in the order they ran, and the same service times shuffled
(independent requests). Shows how much of a p99 is the order of the slow
requests rather than their share (lab log 2026-11-29, "A server's p99
follows the order of its slow requests").

    lab/analysis/serve-order.py PROFILE.parquet COUNT RATE [SEED] [PERIOD]

PROFILE: a `fikit-profile` trace of the server (its `fikit.characterization`
metadata holds the untraced runs); COUNT, RATE, SEED: the set's `requests`
(workload.py's Poisson draw); PERIOD: blocking synchronizations a request
makes (2 for a program that waits for its input and for its result). A
request's service time: its first iteration's busy part (first launch to
its sync) plus its later iterations whole.
"""

import json
import random
import statistics
import sys

def characterization(path):
    """The `fikit.characterization` metadata value, read from the footer's bytes."""
    b = open(path, "rb").read()
    key = b"fikit.characterization"
    i = b.rfind(key)
    if i < 0:
        sys.exit(f"{path}: no fikit.characterization metadata")
    j = i + len(key) + 1  # the thrift field header of the value
    n = shift = 0
    while True:
        c = b[j]
        j += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            break
    return json.loads(b[j : j + n])


def workload():
    """scripts/workloads/workload.py as a module, its arrival draws without
    torch (a stand-in module, as tests/workload.rs loads it)."""
    import importlib.util
    import pathlib
    import types

    path = pathlib.Path(__file__).resolve().parents[2] / "scripts/workloads/workload.py"
    sys.modules.setdefault("torch", types.ModuleType("torch"))
    spec = importlib.util.spec_from_file_location("workload", path)
    w = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(w)
    return w


def p99_ms(arrivals, service):
    done, lat = 0, []
    for a, s in zip(arrivals, service):
        done = max(a, done) + s
        lat.append(done - a)
    lat.sort()
    return lat[min(len(lat) - 1, int(0.99 * len(lat)))] / 1e6


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, count, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    period = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    arrivals = workload().poisson_arrivals_ns(count, rate, seed)
    for k, run in enumerate(characterization(path)["untraced_runs"]):
        busy, whole = run["busy_ns"], run["iterations_ns"]
        m = len(busy)
        if m < count * period:
            sys.exit(f"{path}: run {k} has {m} iterations, fewer than {count} requests of {period}")
        busy, whole = busy[m - count * period :], whole[m - count * period :]
        service = [
            busy[r * period] + sum(whole[r * period + 1 : (r + 1) * period]) for r in range(count)
        ]
        shuffled = []
        for s in range(20):
            x = service[:]
            random.Random(s).shuffle(x)
            shuffled.append(p99_ms(arrivals, x))
        print(
            f"run {k}: service median {statistics.median(service) / 1e6:.2f} ms; "
            f"p99 in order {p99_ms(arrivals, service):.1f} ms, shuffled "
            f"{statistics.median(shuffled):.1f} ms [{min(shuffled):.1f}-{max(shuffled):.1f}] (20 shuffles)"
        )


if __name__ == "__main__":
    main()
