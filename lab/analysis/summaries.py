"""The rows of `fikit-run set` / `fikit-run summary` outputs (summary.json),
for the lab's readings of them."""

import json
import sys


def rows(path, prog):
    """The rows of the summary.json at `path`; exits naming `prog` and the
    file when it is not one."""
    try:
        return json.load(open(path))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{prog}: {path}: not a fikit-run summary.json ({e})")
