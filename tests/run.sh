#!/bin/sh
# Runs every test program given and prints the total as the last line: "N passed, N failed".
# A program that exits non-zero without having reported a FAIL line counts as one failure
# (a crash or sanitizer report must never pass silently).
passed=0; failed=0; skipped=0
for t in "$@"; do
    out=$(mktemp)
    "$t" >"$out" 2>&1
    rc=$?
    cat "$out"
    p=$(grep -c '^PASS ' "$out"); f=$(grep -c '^FAIL ' "$out"); s=$(grep -c '^SKIP ' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $t: exited with status $rc without reporting a failure"
        f=1
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    rm -f "$out"
done
# The last line is exactly "N passed, N failed"; skipped checks (each printed above with its
# reason) are counted on the line before it.
[ "$skipped" -gt 0 ] && echo "$skipped skipped (see the SKIP lines above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
