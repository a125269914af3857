#!/usr/bin/env bash
# tests/sanitizers.sh: `make check-asan` and `make check-tsan`. Builds pgolab and the unit tests
# with a sanitizer into build-SAN/ (the binary build-SAN/pgolab: ./pgolab and build/ are left
# alone), then runs the unit tests and the given e2e scripts on it through tests/check.sh
# (PGOLAB=build-SAN/pgolab; tests/e2e/lib.sh). Every sanitizer report is written to a file in
# build-SAN/reports/ (log_path) rather than to stderr, so that a test expecting a failing exit
# status cannot pass over one: any report there fails the target, and its first lines are shown.
#
# Usage: tests/sanitizers.sh asan|tsan "E2E.t ..." UNIT_BINARY...   (from the repo's top)
# Environment: MAKE (the make to build with), PGOLAB_CI (passed on to check.sh).
set -u
san=$1 e2e=$2
shift 2
case $san in asan | tsan) ;; *) echo "sanitizers.sh: expected asan or tsan, not '$san'" >&2; exit 1 ;; esac
dir=build-$san
log=$dir/check.log
mkdir -p "$dir" && : >"$log"
start=$(date +%s)
echo "make check-$san: building into $dir/ (output in $log)"
if ! ${MAKE:-make} --no-print-directory san-build SAN="$san" >>"$log" 2>&1; then
    tail -n 40 "$log"
    echo "make check-$san: FAIL: the build failed (see $log)"
    exit 1
fi

reports=$PWD/$dir/reports
rm -rf "$reports" && mkdir -p "$reports"
# halt on the first finding with an exit status no test expects; leaks are checked (LSan runs
# inside ASan); the run-time libraries pgolab loads (libsqlite3, libmariadb, libpq) are not
# instrumented, which ASan and TSan handle (their calls into libc are still intercepted)
export ASAN_OPTIONS="log_path=$reports/asan:exitcode=86:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=87"
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=1:exitcode=88:second_deadlock_stack=1"
# PGOLAB_SANITIZER: for the few checks the sanitizer itself changes (TSan's own thread)
# PGOLAB_RECIPES: the binary in build-SAN/ finds no recipes/ beside it (src/pgo/recipe.c)
export PGOLAB=$PWD/$dir/pgolab PGOLAB_MEMCHECK=off PGOLAB_SANITIZER=$san \
    PGOLAB_RECIPES=${PGOLAB_RECIPES:-$PWD/recipes}

bash tests/check.sh --log="$log" --e2e="$e2e" "$@"
rc=$?
found=$(find "$reports" -type f | sort)
if [ -n "$found" ]; then
    echo "make check-$san: the sanitizer reported (files in $reports):"
    for f in $found; do
        echo "---- $f"
        head -n 40 "$f"
    done
    rc=1
fi
t=$(($(date +%s) - start))
if [ "$rc" -eq 0 ]; then
    echo "make check-$san: PASS in ${t} s (no sanitizer report; full output in $log)"
else
    echo "make check-$san: FAIL after ${t} s (full output in $log)"
fi
exit "$rc"
