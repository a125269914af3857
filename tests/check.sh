#!/usr/bin/env bash
# tests/check.sh: the quiet runner of `make check`. Runs the cmocka unit binaries, then the e2e
# TAP scripts, each under its own prove (verbose, stderr merged), several at once, and prints one line per test file and the
# totals; a failing file's full output is shown, every skip with its reason (which names what
# the check needs and where it runs instead); the full output of everything goes to the log.
# Exit status: 0 when every unit test and every e2e script passed, else 1 (e2e does not run
# after a unit failure, as before).
#
# Usage: tests/check.sh [--log=FILE] [--e2e=DIR] UNIT_BINARY...
#   --log=FILE  full output, appended (default build/check.log)
#   --e2e=DIR   the prove directory (default tests/e2e), or a space-separated list of .t files
# Environment: PROVE (default prove); CHECK_JOBS (e2e files run at once, default 4);
# CHECK_UNIT_JOBS (unit binaries run at once, default twice the number of CPUs: many wait); CHECK_TIMES
# (the e2e files' times, seconds and name per line: read to run the longest first, then
# updated; default build/e2e-times); PGOLAB_CI=1
# (set by .ci/run: skips of checks CI must run fail; see tests/e2e/lib.sh `skip` and
# tests/unit/unit_helpers.h UNIT_SKIP).
set -u

LOG=build/check.log
E2E=tests/e2e
UNITS=()
for a in "$@"; do
    case $a in
    --log=*) LOG=${a#--log=} ;;
    --e2e=*) E2E=${a#--e2e=} ;;
    -*) echo "check.sh: unknown option $a (expected --log=FILE or --e2e=DIR)" >&2; exit 1 ;;
    *) UNITS+=("$a") ;;
    esac
done
mkdir -p "$(dirname "$LOG")"
touch "$LOG"
OUT=$(mktemp "${TMPDIR:-/tmp}/pgolab-check.XXXXXX") || exit 1
trap 'rm -f "$OUT"' EXIT

# dots NAME WIDTH: NAME padded with dots to WIDTH
dots() {
    local s="$1 .." w=$2
    while [ "${#s}" -lt "$w" ]; do s="$s."; done
    printf '%s' "$s"
}

# ---- unit tests (cmocka): CHECK_UNIT_JOBS binaries at a time (default: twice the CPUs; each makes
# its own temporary directory), reported in the order given
u_files=0 u_tests=0 u_skipped=0 u_failed=0 u_t0=$(date +%s)
UJOBS=${CHECK_UNIT_JOBS:-$((2 * $(nproc)))}
case $UJOBS in '' | *[!0-9]* | 0) echo "check.sh: CHECK_UNIT_JOBS=$UJOBS: expected a number of unit binaries at a time, 1 or more" >&2; exit 1 ;; esac
UDIR=$(mktemp -d "${TMPDIR:-/tmp}/pgolab-check-unit.XXXXXX") || exit 1
trap 'rm -f "$OUT"; rm -rf "$UDIR"' EXIT
i=0
for bin in "${UNITS[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$UJOBS" ]; do wait -n; done
    ( "$bin" >"$UDIR/$i.out" 2>&1; echo $? >"$UDIR/$i.rc" ) &
    i=$((i + 1))
done
wait
i=0
for bin in "${UNITS[@]}"; do
    name=${bin##*/}
    mv "$UDIR/$i.out" "$OUT"
    rc=$(cat "$UDIR/$i.rc" 2>/dev/null || echo 1)
    i=$((i + 1))
    { echo "==== unit $bin (exit $rc)"; cat "$OUT"; } >>"$LOG"
    run=$(sed -n 's/^\[==========\] \([0-9]*\) test(s) run\.$/\1/p' "$OUT" | tail -1)
    skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:$/\1/p' "$OUT" | tail -1)
    run=${run:-0} skipped=${skipped:-0}
    u_files=$((u_files + 1)) u_tests=$((u_tests + run)) u_skipped=$((u_skipped + skipped))
    line="unit  $(dots "$name" 36)"
    if [ "$rc" -eq 0 ] && [ "$run" -gt 0 ]; then
        extra=
        [ "$skipped" -gt 0 ] && extra=", $skipped skipped"
        printf '%s ok   %d tests%s\n' "$line" "$run" "$extra"
        grep '^SKIP: ' "$OUT" | sed 's/^/      /'
    else
        u_failed=$((u_failed + 1))
        printf '%s FAILED (exit %d)\n' "$line" "$rc"
        sed 's/^/    | /' "$OUT"
    fi
done
rm -rf "$UDIR"
if [ "${#UNITS[@]}" -gt 0 ]; then
    echo "unit  total: $u_files files, $u_tests tests, $u_skipped skipped, $(( $(date +%s) - u_t0 )) s, $u_failed files failed"
fi
if [ "$u_failed" -gt 0 ]; then
    echo "e2e   not run: unit tests failed"
    echo "make check: FAIL (full output in $LOG)"
    exit 1
fi

# ---- e2e tests: each file under its own `prove -v --merge`, JOBS files at a time (the files
# use private directories, ports and server instances: tests/e2e/lib.sh), the longest first by
# the times of the last run (CHECK_TIMES, default build/e2e-times, else tests/e2e/times, where
# each run writes its own). A file's whole output goes
# to the log in one piece when it ends, and the filter prints its line: ok with its count of
# checks and skips, or FAILED with the whole output.
read -ra E2E_PATHS <<<"$E2E"
FILES=()
for p in "${E2E_PATHS[@]}"; do
    [ -e "$p" ] || { echo "make check: no e2e directory or file $p" >&2; exit 1; }
    if [ -d "$p" ]; then FILES+=("$p"/*.t); else FILES+=("$p"); fi
done
SAVE_TIMES=${CHECK_TIMES:-build/e2e-times}
TIMES=$SAVE_TIMES
[ -s "$TIMES" ] || TIMES=tests/e2e/times
# order: the known longest first, then the files with no time (new ones) in name order
mapfile -t FILES < <(printf '%s\n' "${FILES[@]}" | awk -v times="$TIMES" '
    BEGIN { while ((getline l < times) > 0) { split(l, f, " "); t[f[2]] = f[1] } }
    { print (($0 in t) ? t[$0] : 1e9) "\t" $0 }' | sort -t "$(printf '\t')" -k1,1nr -k2,2 | cut -f2)

# format FILE OUTPUT: the line of one finished file; exit 3 when it skipped under PGOLAB_CI=1
format() {
    perl -e '
    my ($name, $file) = @ARGV;
    open my $in, "<", $file or die "$file: $!";
    my (@block, $ci_skip);
    while (my $l = <$in>) {
        chomp $l;
        if ($l =~ /^\Q$name\E \.{2,} ?(.*)$/) { push @block, $1 if length $1; next }
        last if $l =~ /^(All tests successful\.|Test Summary Report|Files=\d+)/;
        push @block, $l;
    }
    sub width { my ($s, $w) = @_; $s .= " .."; $s .= "." while length($s) < $w; $s }
    pop @block while @block && $block[-1] =~ /^\s*$/;
    my $last = @block ? $block[-1] : "";
    my $n = grep { /^(not )?ok \d+/ } @block;
    my @skips = map { /^ok \d+\s*(?:-[^#]*)?# skip (.*)$/i ? ($1) : () } @block;
    my $line = "e2e   " . width($name, 36);
    if ($last eq "ok") {
        printf "%s ok   %d checks%s\n", $line, $n, @skips ? ", " . scalar(@skips) . " skipped" : "";
        my %seen;
        print "      SKIP: $_\n" for grep { !$seen{$_}++ } @skips;
    } elsif ($last =~ /^skipped: (.*)/ && $ENV{PGOLAB_CI}) {
        print "$line FAILED: skipped under PGOLAB_CI=1: $1\n";
        $ci_skip = 1;
    } elsif ($last =~ /^skipped: (.*)/) {
        print "$line skipped: $1\n";
    } else {
        print "$line FAILED\n";
        print "    | $_\n" for @block;
    }
    exit($ci_skip ? 3 : 0);
    ' "$1" "$2"
}

JOBS=${CHECK_JOBS:-4}
case $JOBS in '' | *[!0-9]* | 0) echo "check.sh: CHECK_JOBS=$JOBS: expected a number of parallel e2e files, 1 or more" >&2; exit 1 ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pgolab-check-e2e.XXXXXX") || exit 1
trap 'rm -f "$OUT"; rm -rf "$WORK"' EXIT
# the fixtures the files share (tests/e2e/lib.sh, "shared fixtures"): made once per run, removed with WORK
export PGOLAB_E2E_FIXTURES=$WORK/fixtures
mkdir -p "$PGOLAB_E2E_FIXTURES"
echo "==== e2e: ${#FILES[@]} files, ${PROVE:-prove} -v --merge FILE, $JOBS at a time" >>"$LOG"
: >"$WORK/times"
e_files=0 e_checks=0 e_failed=0 failed_names=()
declare -A PID_FILE=() START=()
# finish_one PID: the file that PID ran is done: log it, print its line, count it
finish_one() {
    local pid=$1 f=${PID_FILE[$1]} rc
    local o="$WORK/$(basename "$f").out"
    rc=$(cat "$WORK/$(basename "$f").rc" 2>/dev/null || echo 1)
    echo "$(( $(date +%s) - START[$1] )) $f" >>"$WORK/times"
    { echo "==== e2e $f (prove exit $rc)"; cat "$o"; } >>"$LOG"
    format "$f" "$o"
    local frc=$?
    e_files=$((e_files + 1))
    e_checks=$((e_checks + $(grep -cE '^(not )?ok [0-9]+' "$o")))
    if [ "$rc" -ne 0 ] || [ "$frc" -ne 0 ]; then
        e_failed=$((e_failed + 1)) failed_names+=("$f")
    fi
    unset "PID_FILE[$pid]"
}
# run_all MAX FILE...: the files, at most MAX at a time; returns when all have ended
run_all() {
    local max=$1 f b done_pid
    shift
    for f in "$@" ""; do
        while [ "${#PID_FILE[@]}" -gt 0 ] && { [ -z "$f" ] || [ "${#PID_FILE[@]}" -ge "$max" ]; }; do
            done_pid=
            wait -n -p done_pid || true
            [ -n "$done_pid" ] && [ -n "${PID_FILE[$done_pid]:-}" ] && finish_one "$done_pid"
        done
        [ -n "$f" ] || break
        b=$(basename "$f")
        ( ${PROVE:-prove} -v --merge "$f" >"$WORK/$b.out" 2>&1; echo $? >"$WORK/$b.rc" ) &
        PID_FILE[$!]=$f START[$!]=$(date +%s)
    done
}
# A file with the header line "# serial" watches something all files share (new entries in
# /dev/shm, say): it runs alone, after the others.
PAR=() SER=()
for f in "${FILES[@]}"; do
    if grep -q '^# serial' "$f"; then SER+=("$f"); else PAR+=("$f"); fi
done
t0=$(date +%s)
[ "${#PAR[@]}" -eq 0 ] || run_all "$JOBS" "${PAR[@]}"
[ "${#SER[@]}" -eq 0 ] || run_all 1 "${SER[@]}"
wall=$(( $(date +%s) - t0 ))
# the times of this run, and the earlier ones of the files it did not run
mkdir -p "$(dirname "$SAVE_TIMES")"
awk 'NR == FNR { seen[$2] = 1; print; next } !($2 in seen)' "$WORK/times" "$SAVE_TIMES" 2>/dev/null |
    sort -k1,1nr >"$SAVE_TIMES.new" && mv "$SAVE_TIMES.new" "$SAVE_TIMES"
echo "e2e   total: $e_files files, $e_checks checks, ${wall} s, $JOBS at a time, $e_failed files failed"
if [ "$e_failed" -eq 0 ]; then
    echo "make check: PASS (full output in $LOG)"
else
    printf 'e2e   failed: %s\n' "${failed_names[@]}"
    # the failed checks again at the end, where a log's tail (CI's) shows them
    for f in "${failed_names[@]}"; do
        o="$WORK/$(basename "$f").out"
        if grep -qE '^not ok [0-9]+' "$o"; then
            echo "e2e   $f, its failed checks:"
            grep -E -A4 '^not ok [0-9]+' "$o" | head -40 | sed 's/^/    | /'
        else
            echo "e2e   $f, the end of its output:"
            tail -n 10 "$o" | sed 's/^/    | /'
        fi
    done
    echo "make check: FAIL (full output in $LOG)"
    exit 1
fi
