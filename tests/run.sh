#!/bin/sh
# Runs every test program given and prints the total as the last line: "N passed, N failed".
# Each program is held to its plan (the sum of its "PLAN n" lines, tests/hc_test.h's hc_plan):
# it must report exactly that many checks (PASS, FAIL and SKIP lines; a line
# "SKIP name [n checks]: ..." or "FAIL name [n checks]: ..." counts n), so a check lost to an early
# return or a failed precondition cannot pass unseen. Each of these is one failure, with a
# FAIL line saying why:
#   - a program with no PLAN line, or whose count differs from its plan (fewer or more);
#   - a check name reported twice, in one program or across the run (names are unique, so
#     a failing line is greppable);
#   - a program that exits non-zero without having reported a FAIL line (a crash or a
#     sanitizer report must never pass silently).
passed=0; failed=0; skipped=0
names=$(mktemp) || exit 2
out=$(mktemp) || exit 2
trap 'rm -f "$names" "$out"' EXIT
trap 'exit 130' INT TERM
for t in "$@"; do
    "$t" >"$out" 2>&1
    rc=$?
    cat "$out"
    # One line "passed failed skipped extra-failures", then run.sh's own FAIL lines. The
    # names seen so far (name TAB program) come first, so a repeat across programs is found.
    res=$(awk -v prog="$t" -v names="$names" '
        BEGIN { FS = "\n"; while ((getline l < names) > 0) { i = index(l, "\t"); first[substr(l, 1, i - 1)] = substr(l, i + 1) }; close(names) }
        /^PLAN [0-9]+$/ { plans++; plan += substr($0, 6) + 0; next }
        /^(PASS|FAIL|SKIP) / {
            split($0, w, " "); tag = w[1]; name = w[2]; n = 1
            if (tag != "PASS" && match($0, /^[A-Z]+ [^ ]+ \[[0-9]+ checks\]/)) {
                s = substr($0, 1, RLENGTH); sub(/ checks\]$/, "", s); sub(/^.*\[/, "", s); n = s + 0
            }
            sub(/:$/, "", name)
            if (tag == "PASS") p++; else if (tag == "FAIL") f += n; else sk += n
            if (name in first) {
                msg[++nmsg] = sprintf("FAIL %s: check name %s reported again (first by %s)", prog, name, first[name])
            } else {
                first[name] = prog; print name "\t" prog >> names
            }
        }
        END {
            got = p + f + sk
            if (!plans)
                msg[++nmsg] = sprintf("FAIL %s: no PLAN line (a test program declares its checks with hc_plan), reported %d", prog, got)
            else if (got < plan)
                msg[++nmsg] = sprintf("FAIL %s: planned %d checks, reported %d (%d lost)", prog, plan, got, plan - got)
            else if (got > plan)
                msg[++nmsg] = sprintf("FAIL %s: planned %d checks, reported %d (%d more than planned)", prog, plan, got, got - plan)
            printf "%d %d %d %d\n", p, f, sk, nmsg
            for (i = 1; i <= nmsg; i++) print msg[i]
        }' "$out")
    read -r p f s extra <<EOF
$res
EOF
    [ "$extra" -gt 0 ] && printf '%s\n' "$res" | sed 1d
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $t: exited with status $rc without reporting a failure"
        f=1
    fi
    passed=$((passed + p)); failed=$((failed + f + extra)); skipped=$((skipped + s))
done
# The last line is exactly "N passed, N failed"; skipped checks (each printed above with its
# reason) are counted on the line before it.
[ "$skipped" -gt 0 ] && echo "$skipped skipped (see the SKIP lines above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
