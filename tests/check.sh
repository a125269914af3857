#!/usr/bin/env bash
# tests/check.sh: the quiet runner of `make check`. Runs the cmocka unit binaries, then the e2e
# TAP scripts with prove (verbose, stderr merged), and prints one line per test file and the
# totals; a failing file's full output is shown, every skip with its reason (which names what
# the check needs and where it runs instead); the full output of everything goes to the log.
# Exit status: 0 when every unit test and every e2e script passed, else 1 (e2e does not run
# after a unit failure, as before).
#
# Usage: tests/check.sh [--log=FILE] [--e2e=DIR] UNIT_BINARY...
#   --log=FILE  full output, appended (default build/check.log)
#   --e2e=DIR   the prove directory (default tests/e2e), or a space-separated list of .t files
# Environment: PROVE (default prove), PGOLAB_CI=1 (set by .ci/run: skips of checks CI must
# run fail; see tests/e2e/lib.sh `skip` and tests/unit/unit_helpers.h UNIT_SKIP).
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

# ---- unit tests (cmocka)
u_files=0 u_tests=0 u_skipped=0 u_failed=0
for bin in "${UNITS[@]}"; do
    name=${bin##*/}
    "$bin" >"$OUT" 2>&1
    rc=$?
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
if [ "${#UNITS[@]}" -gt 0 ]; then
    echo "unit  total: $u_files files, $u_tests tests, $u_skipped skipped, $u_failed files failed"
fi
if [ "$u_failed" -gt 0 ]; then
    echo "e2e   not run: unit tests failed"
    echo "make check: FAIL (full output in $LOG)"
    exit 1
fi

# ---- e2e tests (prove); its verbose, merged output goes to the log whole, and the filter
# prints a line per file: a file's block runs from its "NAME .. " header to the next header
# or to prove's summary.
read -ra E2E_PATHS <<<"$E2E"
for p in "${E2E_PATHS[@]}"; do
    [ -e "$p" ] || { echo "make check: no e2e directory or file $p" >&2; exit 1; }
done
echo "==== e2e: ${PROVE:-prove} -v --merge ${E2E_PATHS[*]}" >>"$LOG"
${PROVE:-prove} -v --merge "${E2E_PATHS[@]}" 2>&1 | tee -a "$LOG" | perl -e '
    $| = 1;
    my ($name, @block, $summary, $ci_skip);
    sub width { my ($s, $w) = @_; $s .= " .."; $s .= "." while length($s) < $w; $s }
    sub finish {
        return unless defined $name;
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
        undef $name;
        @block = ();
    }
    while (my $l = <STDIN>) {
        chomp $l;
        if ($summary) { print "$l\n"; next }
        if ($l =~ /^(\S+\.t) \.{2,} ?(.*)$/) {
            finish();
            $name = $1;
            push @block, $2 if length $2;
        } elsif ($l =~ /^(All tests successful\.|Test Summary Report|Files=\d+)/) {
            finish();
            $summary = 1;
            print "$l\n";
        } else {
            push @block, $l;
        }
    }
    finish();
    exit($ci_skip ? 3 : 0);
'
st=("${PIPESTATUS[@]}")
rc=${st[0]}
[ "${st[2]}" -eq 0 ] || rc=1
if [ "$rc" -eq 0 ]; then
    echo "make check: PASS (full output in $LOG)"
else
    echo "make check: FAIL (full output in $LOG)"
    exit 1
fi
