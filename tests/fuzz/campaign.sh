#!/bin/sh
# A fuzzing campaign (docs/FUZZING.md): each target named (all by default) in turn, niced, until
# RUNS executions or SECONDS seconds, new inputs into $FUZZ_WORK/corpus/TARGET (default
# /tmp/halfcheck-fuzz), findings into $FUZZ_WORK/artifacts/. Stops at the first finding of a
# target and goes on with the next. Keep only minimized inputs in the repository (merge.sh).
# Usage: tests/fuzz/campaign.sh [-r RUNS] [-t SECONDS] [TARGET...]   (after make fuzz)
runs=1000000; secs=1800
while getopts r:t: o; do
    case $o in r) runs=$OPTARG ;; t) secs=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
work=${FUZZ_WORK:-/tmp/halfcheck-fuzz}
targets=${*:-$(ls build/fuzz/ | sed -n 's/^fuzz_\([a-z0-9]*\)$/\1/p')}
mkdir -p "$work/artifacts"
for t in $targets; do
    mkdir -p "$work/corpus/$t"
    dict=; [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
    echo "campaign: $t ($runs runs or $secs s) -> $work/$t.log"
    nice -n 19 "build/fuzz/fuzz_$t" -runs="$runs" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 $dict -artifact_prefix="$work/artifacts/$t-" "$work/corpus/$t" "tests/fuzz/corpus/$t" \
        >"$work/$t.log" 2>&1
    echo "campaign: $t exit $?: $(grep -E '^#[0-9]+.*(DONE|cov)' "$work/$t.log" | tail -1)"
done
