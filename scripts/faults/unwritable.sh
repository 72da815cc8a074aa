#!/usr/bin/env bash
# Fault (e1): `-o` names a folder fikit-profile cannot write. Works as root
# too (root ignores chmod): the cases are a path under a regular file (always),
# a read-only tmpfs mount (when mount is allowed: root, not in a locked-down
# container) or else a chmod 555 folder (not root), and a folder under /proc.
# Expected in each: fikit-profile stops before starting the command, prints
# `fikit-profile: error: cannot create …` naming the folder and the reason,
# exits 2 (bad input); nothing is written; the command does not run.
source "$(dirname "$0")/lib.sh"
try() {
    local label="$1" dir="$2" done="$WORK/done-$1.json"
    profile "$dir" "$WORK/$label.log" --name unwritable -- \
        "$PYTHON" "$WORKLOAD" --iters 5 --done-file "$done"
    local msg
    msg=$(grep -m1 'fikit-profile: error' "$WORK/$label.log")
    fact "$label: exit $STATUS, message: ${msg:-none}"
    check "$label: exit 2" [ "$STATUS" = 2 ]
    check "$label: message names the folder" grep -qF "cannot create" "$WORK/$label.log"
    check "$label: the command did not run" [ ! -e "$done" ]
    check "$label: no panic" bash -c "! grep -q panicked '$WORK/$label.log'"
}
echo "not a folder" >"$WORK/a-file"
try under-a-file "$WORK/a-file/traces"
mkdir -p "$WORK/ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$WORK/ro" 2>/dev/null; then
    trap 'umount "$WORK/ro" 2>/dev/null' EXIT
    try read-only-mount "$WORK/ro"
    umount "$WORK/ro"
elif [ "$(id -u)" != 0 ]; then
    chmod 555 "$WORK/ro"
    try chmod-555 "$WORK/ro"
    chmod 755 "$WORK/ro"
else
    fact "read-only mount not possible here (root without mount rights): case skipped"
fi
try under-proc "/proc/fikit-faults-$$"
finish unwritable
