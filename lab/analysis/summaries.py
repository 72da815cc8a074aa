"""The rows of `fikit-run set` / `fikit-run summary` outputs (summary.json),
for the lab's readings of them."""

import json
import sys


def summary(path, prog):
    """The summary.json at `path`, whole (its `rows` checked to be there);
    exits naming `prog` and the file when it is not one."""
    try:
        s = json.load(open(path))
        s["rows"]
        return s
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{prog}: {path}: not a fikit-run summary.json ({e})")


def rows(path, prog):
    """The rows of the summary.json at `path`; exits naming `prog` and the
    file when it is not one."""
    return summary(path, prog)["rows"]


def distinct_runs(paths, prog):
    """The `fikit-run` run.json files at `paths` with rounds, each once: a
    sitting's folder unpacked under two names holds the same run, known by
    its pair and its first round's spawn time. Exits naming `prog` and the
    file when one is not a run.json."""
    seen = set()
    for path in paths:
        try:
            run = json.load(open(path))
            rounds = run.get("rounds") or []
            run["jobs"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            sys.exit(f"{prog}: {path}: not a fikit-run run.json ({e})")
        if not rounds:
            continue
        key = (tuple(sorted(j["job"] for j in rounds[0]["jobs"])), rounds[0]["jobs"][0]["spawn_ns"])
        if key not in seen:
            seen.add(key)
            yield path, run
