#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer harness for SECONDS from the committed SEEDS, new inputs kept in WORK
# (never in the source tree). Prints libFuzzer's figures and the number of executions; exits
# non-zero on any finding (crash, leak, sanitizer report, timeout), whose input lands in WORK.
#
#   tests/fuzz/run.sh HARNESS SEEDS WORK SECONDS [LIBFUZZER-ARGS...]
set -euo pipefail
harness=$1 seeds=$2 work=$3 seconds=$4
shift 4
mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
log=$work/last-run.log
rc=0
"$harness" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$work/" "$@" "$work" "$seeds" >"$log" 2>&1 || rc=$?
grep -E '^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY' "$log" | tail -n 8
if [[ $rc != 0 ]]; then
    echo "run.sh: $(basename "$harness") found a problem (exit $rc); the log: $log"
    echo "run.sh: re-run one saved input with full stacks: $harness $work/crash-... (or leak-, timeout-)"
    tail -n 40 "$log"
fi
exit "$rc"
