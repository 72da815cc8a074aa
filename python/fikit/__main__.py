"""``python -m fikit``: where the installed commands and shipped traces are."""

from __future__ import annotations

import argparse
import sys

from . import SHIPPED_GPUS, bin_dir, traces


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fikit",
        description="Prints where the installed fikit commands and shipped traces are.",
    )
    sub = parser.add_subparsers(dest="what", required=True)
    t = sub.add_parser("traces", help="the folder of the shipped traces of one GPU")
    t.add_argument("gpu", nargs="?", default="h200", choices=SHIPPED_GPUS)
    sub.add_parser("bin", help="the folder of fikit-profile, fikit-sim, fikit-run and their libraries")
    args = parser.parse_args(argv)
    try:
        print(traces(args.gpu) if args.what == "traces" else bin_dir())
    except (FileNotFoundError, ValueError) as e:
        print(f"python -m fikit: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
