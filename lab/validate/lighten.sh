#!/usr/bin/env bash
# Room for a device call's carry: the working tree travels whole (tracked
# and untracked-not-ignored files, at most 64 MiB with the carried paths),
# and the reports and shipped traces (about 54 MB) are most of it, though
# nothing run on the device reads them. `out` deletes them from the working
# copy (every tracked file under reports/ and lab/traces/, and the traces'
# Parquet and gzip files under traces/), `back` restores them from git.
# Run `back` before anything else here (tests, commits): with the files
# out, `git commit -a` would record their deletion.
#
#   lab/validate/lighten.sh out|back   (from the repository root)
set -euo pipefail
paths=('reports/**' 'traces/**.parquet' 'traces/**.gz' 'lab/traces/**')
case "${1:-}" in
out)
  if ! git diff --quiet HEAD -- "${paths[@]}"; then
    echo "lighten.sh: changes under reports/ or traces/ not committed: commit them first" >&2
    exit 2
  fi
  git ls-files -z -- "${paths[@]}" | xargs -0 rm -f
  echo "lighten.sh: reports and traces out of the working copy; 'lighten.sh back' restores them"
  ;;
back)
  git ls-files -z --deleted -- "${paths[@]}" | xargs -0 -r git checkout --
  echo "lighten.sh: reports and traces back ($(git ls-files --deleted -- "${paths[@]}" | wc -l) still missing)"
  ;;
*)
  echo "usage: lab/validate/lighten.sh out|back" >&2
  exit 2
  ;;
esac
