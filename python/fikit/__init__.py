"""fikit from Python: find the installed commands and shipped traces, read a trace.

The wheel (``pip install fikit``) puts the commands ``fikit-profile``,
``fikit-sim`` and ``fikit-run`` on PATH, with the injected collector
(``libfikit_collector.so``) and launch shim (``libfikit_shim.so``) beside
them, and the traces the project ships under ``<prefix>/share/fikit/traces``.
Everything fikit computes, the commands compute; this module only finds them,
runs ``fikit-sim``, and reads a trace into a polars DataFrame (``pip install
'fikit[polars]'``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Trace", "bin_dir", "command", "read_trace", "sim", "sim_json", "traces"]

#: Set to a folder holding built fikit commands (``target/release``, say) to use
#: those instead of the installed ones.
BIN_DIR_ENV = "FIKIT_BIN_DIR"

#: The GPUs the shipped traces were captured on, one folder each.
SHIPPED_GPUS = ("h200", "h100")


def bin_dir() -> Path:
    """The folder of the fikit commands: ``$FIKIT_BIN_DIR``, else the
    environment's scripts folder where pip installed them, else the folder of
    ``fikit-sim`` on PATH."""
    env = os.environ.get(BIN_DIR_ENV)
    if env:
        d = Path(env)
        if not (d / "fikit-sim").is_file():
            raise FileNotFoundError(f"{BIN_DIR_ENV}={env}: no fikit-sim in that folder")
        return d
    scripts = Path(sysconfig.get_path("scripts"))
    if (scripts / "fikit-sim").is_file():
        return scripts
    found = shutil.which("fikit-sim")
    if found:
        return Path(found).resolve().parent
    raise FileNotFoundError(
        f"fikit-sim is neither in {scripts} nor on PATH: `pip install fikit`, "
        f"or set {BIN_DIR_ENV} to a folder with the built commands"
    )


def command(name: str) -> Path:
    """The path of one fikit command (``"fikit-sim"``, ``"fikit-profile"``,
    ``"fikit-run"``)."""
    path = bin_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"{name} is not in {path.parent}")
    return path


def traces(gpu: str = "h200") -> Path:
    """The folder of the traces the project ships for ``gpu`` (``"h200"`` or
    ``"h100"``), as the wheel installed them, or in the checkout whose
    commands ``$FIKIT_BIN_DIR`` names (``target/release``)."""
    if gpu not in SHIPPED_GPUS:
        raise ValueError(f"no shipped traces for {gpu!r}: choose one of {', '.join(SHIPPED_GPUS)}")
    bins = bin_dir()
    # pip installs the scripts to <prefix>/bin and the data to <prefix>, for a
    # virtual environment, the system and --user alike; a checkout builds
    # into <checkout>/target/<profile>.
    candidates = [bins.parent / "share" / "fikit" / "traces" / gpu]
    if os.environ.get(BIN_DIR_ENV):
        candidates.append(bins.parent.parent / "traces" / gpu)
    for folder in candidates:
        if folder.is_dir():
            return folder
    raise FileNotFoundError(
        f"{' and '.join(map(str, candidates))} are missing: is fikit installed from its wheel?"
        if len(candidates) > 1
        else f"{candidates[0]} is missing: is fikit installed from its wheel?"
    )


def sim(
    *args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs ``fikit-sim`` with ``args``; its output is in ``stdout`` and its
    progress and notes in ``stderr``.

    Raises :class:`subprocess.CalledProcessError` (with fikit-sim's message in
    ``stderr``) when it fails; exit status 2 is bad input."""
    return subprocess.run(
        [str(command("fikit-sim")), *map(str, args)],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )


def sim_json(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None) -> Any:
    """Runs ``fikit-sim ARGS --format json`` and returns the parsed JSON."""
    return json.loads(sim(*args, "--format", "json", cwd=cwd).stdout)


@dataclass
class Trace:
    """One fikit trace: its events (one row per kernel, copy, memset, API call
    or synchronization; traces/README.md gives the columns) and its metadata
    (the ``fikit.*`` keys, as strings)."""

    events: Any
    metadata: dict[str, str]

    @property
    def job(self) -> str:
        """The job's name (``fikit.job_name``)."""
        return self.metadata["fikit.job_name"]

    @property
    def priority(self) -> int:
        """0 (highest) to 9 (``fikit.priority``)."""
        return int(self.metadata["fikit.priority"])


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Reads a fikit trace (a Parquet file written by ``fikit-profile`` or
    ``fikit-sim import``) into a polars DataFrame and its metadata.

    Checks only that the file is a fikit trace; ``fikit-sim inspect`` checks
    every field."""
    try:
        import polars as pl
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("read_trace needs polars: pip install 'fikit[polars]'") from e
    if not hasattr(pl, "read_parquet_metadata"):
        raise ImportError(
            f"read_trace needs polars 1.30 or newer (this is {pl.__version__}): "
            "pip install 'fikit[polars]' --upgrade"
        )
    metadata = pl.read_parquet_metadata(path)
    if "fikit.format_version" not in metadata:
        raise ValueError(
            f"{path}: not a fikit trace: the Parquet file has no `fikit.format_version` metadata key"
        )
    return Trace(events=pl.read_parquet(path), metadata=metadata)
