#!/usr/bin/env bash
# Fault (e2): the output folder is full: a 64 KiB tmpfs, nearly filled first
# (needs mount rights: root; otherwise SKIP). Expected: the command runs to
# its end unaffected (its own exit 0, all 300 steps); the collector says
# `fikit: cannot write the spool: No space left on device …; recording
# stops`; fikit-profile reports the trace it could not write (or writes an
# incomplete one) and exits 1 (the command succeeded but the capture failed),
# never hangs or panics.
source "$(dirname "$0")/lib.sh"
full="$WORK/full" done="$WORK/done.json"
mkdir -p "$full"
mount -t tmpfs -o size=64k tmpfs "$full" 2>/dev/null ||
    skip full "cannot mount a tmpfs here (needs root); not tried"
trap 'umount "$full" 2>/dev/null' EXIT
dd if=/dev/zero of="$full/filler" bs=1k count=48 status=none 2>/dev/null
fact "free before: $(df -k --output=avail "$full" | tail -1 | tr -d ' ') KiB"
profile "$full" "$WORK/profile.log" --name full -- \
    "$PYTHON" "$WORKLOAD" --iters 300 --done-file "$done"
iters=$(grep -o '"iters": [0-9]*' "$done" 2>/dev/null | cut -d' ' -f2)
check "the command ran all its steps (${iters:-none}/300)" [ "${iters:-0}" = 300 ]
check "fikit-profile exit $STATUS is 0 or 1 (1: the capture failed)" [ "$STATUS" = 0 -o "$STATUS" = 1 ]
msg=$(grep -m1 -i 'no space left' "$WORK/profile.log")
check "a message says so: ${msg:-none}" [ -n "$msg" ]
check "no panic" bash -c "! grep -q panicked '$WORK/profile.log'"
t=$(traces "$full" | head -1)
if [ -n "$t" ]; then
    fact "a trace was written: capture_complete=$(field "$t" capture_complete), kernels $(field "$t" kernels)"
else
    fact "no trace written"
fi
finish full
