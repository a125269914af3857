#!/usr/bin/env bash
# tests/fuzz/run.sh: `make fuzz`. Runs each libFuzzer target (build-fuzz/fuzz/fuzz_NAME, built by
# `make fuzz-build`) for SECONDS from its seed corpus tests/fuzz/corpus/NAME/ (read-only: new
# inputs go to build-fuzz/corpus/NAME/, kept between runs). Stops a target at its first crash,
# leak, timeout (10 s per input) or exit, keeps the input in build-fuzz/crashes/ and fails.
# Exit status: 0 when no target found anything, else 1. Logs: build-fuzz/logs/NAME.log.
# The targets run FUZZ_JOBS at a time (default: the number of CPUs; each libFuzzer process is
# single-threaded, so each still gets SECONDS of one core); their lines come in the order given.
#
# Usage: tests/fuzz/run.sh SECONDS NAME...   (from the repository's top)
set -u
secs=$1
shift
[ "$#" -gt 0 ] || { echo "fuzz: no targets" >&2; exit 1; }
jobs=${FUZZ_JOBS:-$(nproc)}
case $jobs in '' | *[!0-9]* | 0) echo "fuzz: FUZZ_JOBS=$jobs: expected a number of targets at once, 1 or more" >&2; exit 1 ;; esac
mkdir -p build-fuzz/logs build-fuzz/crashes
# fuzz_one NAME: run one target; its report lines on stdout, exit 1 when it found something
fuzz_one() {
    local name=$1 bin seeds work log rc runs cov
    bin=build-fuzz/fuzz/fuzz_$name
    seeds=tests/fuzz/corpus/$name
    work=build-fuzz/corpus/$name
    log=build-fuzz/logs/$name.log
    [ -x "$bin" ] || { echo "fuzz  $name: $bin not built (make fuzz-build)"; return 1; }
    [ -d "$seeds" ] || { echo "fuzz  $name: no seed corpus $seeds"; return 1; }
    mkdir -p "$work"
    # -close_fd_mask=3: the targets' own output (one error line per bad input) is noise; libFuzzer
    # and the sanitizers still report on the saved stderr. The extra time bounds a stuck input.
    ASAN_OPTIONS=detect_leaks=1:exitcode=86 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        timeout -k 10 $((secs + 60)) "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -close_fd_mask=3 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/crashes/$name-" "$work" "$seeds" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        printf 'fuzz  %-12s ok   %s s, %s inputs, %s, corpus %s files\n' "$name" "$secs" "${runs:-?}" \
            "${cov:-cov: ?}" "$(find "$work" -type f | wc -l)"
    else
        printf 'fuzz  %-12s FAILED (exit %d; log %s)\n' "$name" "$rc" "$log"
        grep -E 'ERROR: |runtime error: |SUMMARY: |Test unit written to' "$log" | head -20 | sed 's/^/    | /'
        grep -A25 -m1 'ERROR: ' "$log" | sed 's/^/    | /'
        echo "    keep the input as tests/fuzz/regressions/$name/NAME with the fix (test_fuzz_$name replays it)"
        return 1
    fi
}

out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
running=0
for name in "$@"; do
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    ( fuzz_one "$name" >"$out/$name.txt"; echo $? >"$out/$name.rc" ) &
    running=$((running + 1))
done
wait
failed=0
for name in "$@"; do
    cat "$out/$name.txt"
    [ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ] || failed=1
done
if [ "$failed" -eq 0 ]; then
    echo "make fuzz: PASS ($# targets, ${secs} s each)"
else
    echo "make fuzz: FAIL"
fi
exit "$failed"
