#!/usr/bin/env python3
"""The model's side of lab/validate/mps-smid.py's tail runs (A_KERNEL=work
beside B): two synthetic traces as mps-smid's clients ran them, A a
kernel of 1,188 x 128 threads (mps-smid's default; 124 registers, 13,056
bytes of shared memory) back to back with a host gap, B a kernel of 528 x 512 threads (28
registers, 2,048 bytes) launched and synchronized one at a time; simulated
under MPS (`fikit-sim export --perfetto --policy mps`), B's stretch over its
time alone by where it starts in A's kernel (tenths), as mps-smid's `read`
prints the GPU's (its `by_tenths`).

    /tmp/hc/bin/python lab/analysis/synth-tail.py FIKIT_SIM TEMPLATE_TRACE WORK \
        [A_US B_US A_GAP_US B_GAP_US [MODEL]]

A_US and B_US are the kernels' times alone (default 516.6 and 1.6, the
2026-11-30 run's), the gaps the host time between a kernel's end and the
next launch (default 140 and 30 us). TEMPLATE_TRACE lends its footer (GPU
limits); its characterization is dropped, so both jobs take the model's
default pressure. Writes WORK/A.parquet, WORK/B.parquet, the scenario and
the export.
"""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

_spec = importlib.util.spec_from_file_location(
    "smid", Path(__file__).resolve().parents[1] / "validate" / "mps-smid.py")
smid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(smid)


def trace(path, template, name, prio, grid, block, regs, smem, kern_ns, gap_ns, span_ns, key):
    meta = {k: v for k, v in pq.ParquetFile(template).metadata.metadata.items()
            if k not in (b"ARROW:schema", b"fikit.characterization")}
    meta[b"fikit.job_name"] = name.encode()
    meta[b"fikit.priority"] = str(prio).encode()
    meta[b"fikit.pid"] = str(1000 + prio).encode()
    rows = {c: [] for c in ("kind", "start_ns", "end_ns", "correlation_id", "name", "grid_x", "block_x",
                            "registers_per_thread", "dynamic_shared_bytes", "kernel_key", "sync_kind",
                            "launch_start_ns", "launch_end_ns")}

    def add(**kw):
        for c in rows:
            rows[c].append(kw.get(c))

    t, corr = 1_000_000, 1
    while t < span_ns:
        add(kind="api", start_ns=t, end_ns=t + 4_000, correlation_id=corr, name="cuLaunchKernel")
        g0 = t + 6_000
        add(kind="kernel", start_ns=g0, end_ns=g0 + kern_ns, correlation_id=corr, name=name + "_k",
            grid_x=grid, block_x=block, registers_per_thread=regs, dynamic_shared_bytes=smem,
            kernel_key=key, launch_start_ns=t, launch_end_ns=t + 4_000)
        add(kind="sync", start_ns=t + 4_000, end_ns=g0 + kern_ns + 2_000, correlation_id=corr + 1,
            sync_kind="context_synchronize")
        t, corr = g0 + kern_ns + 2_000 + gap_ns, corr + 2
    n = len(rows["kind"])
    kinds = rows["kind"]
    u32 = lambda c: pa.array(rows[c], pa.uint32())

    def on(which, value, t=pa.uint32()):
        """`value` on the rows of kinds `which`, null on the others."""
        return pa.array([value if k in which else None for k in kinds], t)

    kernel = ("kernel",)
    cols = {
        "kind": pa.array(kinds, pa.string()),
        "start_ns": pa.array(rows["start_ns"], pa.int64()),
        "end_ns": pa.array(rows["end_ns"], pa.int64()),
        "device": on(kernel, 0),
        "context": on(("kernel", "sync"), 1),
        "stream": on(kernel, 7),
        "correlation_id": u32("correlation_id"),
        "name": pa.array(rows["name"], pa.string()),
        "demangled_name": pa.array([x if k == "kernel" else None for x, k in zip(rows["name"], kinds)], pa.string()),
        "grid_x": u32("grid_x"),
        "grid_y": on(kernel, 1),
        "grid_z": on(kernel, 1),
        "block_x": u32("block_x"),
        "block_y": on(kernel, 1),
        "block_z": on(kernel, 1),
        "registers_per_thread": u32("registers_per_thread"),
        "static_shared_bytes": on(kernel, 0),
        "dynamic_shared_bytes": u32("dynamic_shared_bytes"),
        "kernel_key": pa.array(rows["kernel_key"], pa.uint64()),
        "bytes": pa.array([None] * n, pa.uint64()),
        "copy_kind": pa.array([None] * n, pa.string()),
        "sync_kind": pa.array(rows["sync_kind"], pa.string()),
        "api_domain": on(("api",), "driver", pa.string()),
        "thread_id": on(("api", "sync"), 42, pa.uint64()),
        "launch_start_ns": pa.array(rows["launch_start_ns"], pa.int64()),
        "launch_end_ns": pa.array(rows["launch_end_ns"], pa.int64()),
        "launch_thread_id": on(kernel, 42, pa.uint64()),
    }
    table = pa.table(cols).replace_schema_metadata(meta)
    pq.write_table(table, path)


def main(argv):
    if len(argv) not in (4, 8, 9):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sim, template, work = argv[1:4]
    a_us, b_us, a_gap, b_gap = (float(x) for x in argv[4:8]) if len(argv) > 4 else (516.6, 1.6, 140.0, 30.0)
    model = argv[8] if len(argv) > 8 else None
    w = Path(work)
    w.mkdir(parents=True, exist_ok=True)
    span = 400_000_000
    trace(w / "A.parquet", template, "A", 9, 1188, 128, 124, 13056, int(a_us * 1e3), int(a_gap * 1e3), span, 11)
    trace(w / "B.parquet", template, "B", 0, 528, 512, 28, 2048, int(b_us * 1e3), int(b_gap * 1e3), span, 22)
    sc = {"name": "mps-smid tail, synthetic", "jobs": [
        {"trace": str((w / "B.parquet").resolve()), "priority": 0, "start_ns": 0},
        {"trace": str((w / "A.parquet").resolve()), "priority": 9, "start_ns": 0}]}
    (w / "scenario.json").write_text(json.dumps(sc))
    cmd = [sim, "export", "--perfetto", "--policy", "mps", "--scenario", str(w / "scenario.json"), "-o", str(w / "sim.json")]
    if model:
        cmd[2:2] = ["--model", model]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"synth-tail.py: {' '.join(cmd)}: {done.stderr.strip()}", file=sys.stderr)
        return 2
    d = json.loads((w / "sim.json").read_text())
    ev = d["traceEvents"] if isinstance(d, dict) else d
    k = {"A": [], "B": []}
    for e in ev:
        if e.get("cat") == "kernel":
            k["A" if e.get("name", "").startswith("A") else "B"].append((e["ts"] * 1e3, e["dur"] * 1e3))
    a, b = np.array(sorted(k["A"])), np.array(sorted(k["B"]))
    ref = b_us * 1e3
    inside, line = smid.by_tenths(a[:, 0], a[:, 0] + a[:, 1], b[:, 0], b[:, 1], ref)
    print(f"simulated: A {len(a)} kernels, median {np.median(a[:, 1]) / 1e3:.1f} us; B {len(b)}, {inside.sum()} start inside A's, median {np.median(b[inside, 1]) / ref:.2f}x")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
