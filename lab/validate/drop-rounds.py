#!/usr/bin/env python3
"""Drop one policy's rounds from fikit-run run.json files so that the next
`fikit-run set` call runs them again and keeps the rest (the file is marked
unfinished; `fikit-run set` keeps an unfinished pair's finished rounds).
For rerunning a policy after its implementation changed (a gate fix, say).

    lab/validate/drop-rounds.py POLICY RUN_JSON...
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    policy, paths = argv[1], argv[2:]
    for path in paths:
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot read: {e}", file=sys.stderr)
            return 2
        if policy not in run.get("policies", []):
            print(f"{path}: policies {run.get('policies')} lack {policy!r}", file=sys.stderr)
            return 2
        before = len(run["rounds"])
        run["rounds"] = [r for r in run["rounds"] if r["policy"] != policy]
        run["complete"] = False
        with open(path, "w") as f:
            json.dump(run, f, indent=2)
            f.write("\n")
        print(f"{path}: {before - len(run['rounds'])} {policy} rounds dropped, {len(run['rounds'])} kept")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
