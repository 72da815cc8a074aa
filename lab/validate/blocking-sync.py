#!/usr/bin/env python3
"""Runs a Python workload with CUDA's blocking synchronization: a thread
waiting on the GPU sleeps instead of spinning its CPU (issue 15, the
host-placement pass's `mps-nap` condition: a partner's GPU work without its
spinning host thread).

Before the workload touches CUDA, it sets the device's primary context
flags to CU_CTX_SCHED_BLOCKING_SYNC through the driver (libcuda), so the
context PyTorch's runtime retains carries them; then it runs the workload
as `__main__` with the remaining arguments. Prints the flags the primary
context holds to stderr.

    python3 lab/validate/blocking-sync.py SCRIPT [ARGS ...]

Exits 2 when the driver cannot be loaded or refuses the flags.
"""
import ctypes
import runpy
import sys

CU_CTX_SCHED_BLOCKING_SYNC = 0x04
USAGE = "usage: python3 lab/validate/blocking-sync.py SCRIPT [ARGS ...]"


def set_blocking_sync(device: int = 0) -> int:
    """Sets the primary context's flags of `device`; returns the flags it then holds."""
    cuda = ctypes.CDLL("libcuda.so.1")
    set_flags = getattr(cuda, "cuDevicePrimaryCtxSetFlags_v2", None) or cuda.cuDevicePrimaryCtxSetFlags
    dev = ctypes.c_int()
    for name, call in (
        ("cuInit", lambda: cuda.cuInit(0)),
        ("cuDeviceGet", lambda: cuda.cuDeviceGet(ctypes.byref(dev), device)),
        ("cuDevicePrimaryCtxSetFlags", lambda: set_flags(dev, CU_CTX_SCHED_BLOCKING_SYNC)),
    ):
        rc = call()
        if rc != 0:
            raise OSError(f"{name} returned CUDA error {rc}")
    flags, active = ctypes.c_uint(), ctypes.c_int()
    rc = cuda.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(active))
    if rc != 0:
        raise OSError(f"cuDevicePrimaryCtxGetState returned CUDA error {rc}")
    return flags.value


def main() -> None:
    if len(sys.argv) < 2:
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    try:
        flags = set_blocking_sync()
    except OSError as e:
        print(f"blocking-sync.py: {e}", file=sys.stderr)
        sys.exit(2)
    print(f"blocking-sync.py: primary context flags 0x{flags:x}", file=sys.stderr)
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
