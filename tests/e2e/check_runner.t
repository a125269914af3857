#!/usr/bin/env bash
# check_runner.t: `make check`'s quiet runner (tests/check.sh) and the skip rules, on a made-up
# suite: one line per test file and the totals, a failing file's whole output shown (and its
# failed checks again at the end, for a log's tail), every
# skip's reason shown, the full output in the log, a non-zero exit on any failure; under
# PGOLAB_CI=1 (.ci/run) a lib.sh `skip` fails and `skip_anywhere` does not, and a unit test
# skipped with UNIT_SKIP(..., NULL) fails while one that names where it runs instead passes.
. "$(dirname "$0")/lib.sh"

# This file runs under .ci/run's PGOLAB_CI=1 too: each case below sets it or not itself.
unset PGOLAB_CI
export CHECK_TIMES=$TMP/e2e-times  # the made-up suite's times stay out of the real ones
CHECK=$REPO_DIR/tests/check.sh
S=$TMP/suite
mkdir -p "$S"
# t NAME BODY: a TAP script in the made-up suite that sources the real lib.sh
t() {
    printf '#!/usr/bin/env bash\nPGOLAB=/bin/true\n. "%s/lib.sh"\n%s\ndone_testing\n' "$E2E_DIR" "$2" >"$S/$1.t"
    chmod +x "$S/$1.t"
}
t pass 'ok "true passes" true; echo "noise on stderr" >&2; is 1 1 "one is one"'
t skips 'ok "first" true; skip 2 "needs the moon; runs in space.t"; skip_anywhere 1 "lost a race; runs only here"'

note "---- a passing suite"
bash "$CHECK" --log="$TMP/pass.log" --e2e="$S" "$REPO_DIR/build/tests/test_strbuf" >"$TMP/pass.out" 2>&1
is "$?" 0 "passing suite: exit 0"
is "$(grep -c "^e2e   $S/" "$TMP/pass.out")" 2 "one line per e2e file"
like "$(<"$TMP/pass.out")" "^e2e   $S/pass\.t \.+ ok   2 checks$" "a passing file: ok and its number of checks"
like "$(<"$TMP/pass.out")" "^unit  test_strbuf \.+ ok   [0-9]+ tests$" "a unit binary: one line"
like "$(<"$TMP/pass.out")" "^unit  total: 1 files, [0-9]+ tests, 0 skipped, [0-9]+ s, 0 files failed$" "unit totals"
like "$(<"$TMP/pass.out")" "^e2e   total: 2 files, 6 checks, [0-9]+ s, 4 at a time, 0 files failed$" "e2e totals"
# each file's output is in the log in one piece, under its own header, however many ran at once
is "$(awk -v f="$S/pass.t" '/^==== e2e / { on = ($3 == f) } on && /^(not )?ok [0-9]+/' "$TMP/pass.log" | wc -l)" 2 \
    "the log: pass.t's checks under its own header"
like "$(<"$TMP/pass.out")" "^      SKIP: needs the moon; runs in space\.t$" "a skip's reason is shown"
like "$(<"$TMP/pass.out")" "^      SKIP: lost a race; runs only here$" "... every skip's"
unlike "$(<"$TMP/pass.out")" "noise on stderr|^ok 1|\[ RUN" "no test output of passing files"
like "$(<"$TMP/pass.log")" "noise on stderr" "the log has the whole output (stderr too)"
like "$(<"$TMP/pass.log")" "\[       OK \] " "the log has the unit output"
like "$(tail -1 "$TMP/pass.out")" "^make check: PASS \(full output in $TMP/pass\.log\)$" "the last line names the log"

note "---- a failing file"
t fail 'ok "first" true; is "got" "wanted" "second"; diag "context for the failure"'
bash "$CHECK" --log="$TMP/fail.log" --e2e="$S" >"$TMP/fail.out" 2>&1
is "$?" 1 "a failing e2e file: exit 1"
like "$(<"$TMP/fail.out")" "^e2e   $S/fail\.t \.+ FAILED$" "its line says FAILED"
like "$(<"$TMP/fail.out")" "^    \| not ok 2 - second$" "its whole output is shown: the failing check"
like "$(<"$TMP/fail.out")" "^    \| ok 1 - first$" "... the passing ones"
like "$(<"$TMP/fail.out")" "^    \| # context for the failure$" "... and its stderr (diag)"
like "$(<"$TMP/fail.out")" "^e2e   failed: $S/fail\.t$" "the failed files are listed at the end"
like "$(tail -1 "$TMP/fail.out")" "^make check: FAIL" "the last line says FAIL"
# a log's tail (all CI keeps) shows the failed checks again, after the list
like "$(sed -n '/^e2e   failed:/,$p' "$TMP/fail.out")" "e2e   $S/fail\.t, its failed checks:
    \| not ok 2 - second" "the failed checks are repeated at the end"
like "$(tail -4 "$TMP/fail.out")" "^    \| # context for the failure" "... with the diag after them"
rm "$S/fail.t"

note "---- CHECK_JOBS, and a serial file"
t alone 'ok "alone" true'
sed -i '2i # serial' "$S/alone.t"
CHECK_JOBS=1 CHECK_TIMES=$TMP/j1-times bash "$CHECK" --log="$TMP/j1.log" --e2e="$S" >"$TMP/j1.out" 2>&1
is "$?" 0 "CHECK_JOBS=1: exit 0"
like "$(<"$TMP/j1.out")" "^e2e   total: 3 files, 7 checks, [0-9]+ s, 1 at a time, 0 files failed$" "CHECK_JOBS=1: one at a time"
is "$(grep "^e2e   $S/" "$TMP/j1.out" | tail -1 | awk '{print $2}')" "$S/alone.t" "a '# serial' file runs after the others"
is "$(awk '{print $2}' "$TMP/j1-times" | sort | paste -sd' ')" "$S/alone.t $S/pass.t $S/skips.t" "CHECK_TIMES: a time for each file run"
rm "$S/alone.t"
# A fresh clone orders the files by tests/e2e/times; a file without a line there runs first and
# can hold up the longest one (refresh it with `make e2e-times` after a full run).
missing=$(for f in "$REPO_DIR"/tests/e2e/*.t; do
              grep -q " tests/e2e/${f##*/}$" "$REPO_DIR/tests/e2e/times" || echo "${f##*/}"; done)
is "$missing" "" "tests/e2e/times has a time for every e2e file"
CHECK_JOBS=x bash "$CHECK" --log="$TMP/jx.log" --e2e="$S" >"$TMP/jx.out" 2>&1
is "$?" 1 "CHECK_JOBS=x: exit 1"
like "$(<"$TMP/jx.out")" "^check\.sh: CHECK_JOBS=x: expected a number of parallel e2e files, 1 or more$" "... in one line"

note "---- a failing unit binary stops before e2e"
printf '#!/bin/sh\necho "[ RUN      ] test_x"\necho "[  FAILED  ] test_x"\nexit 1\n' >"$TMP/test_broken"
chmod +x "$TMP/test_broken"
bash "$CHECK" --log="$TMP/u.log" --e2e="$S" "$TMP/test_broken" >"$TMP/u.out" 2>&1
is "$?" 1 "a failing unit binary: exit 1"
like "$(<"$TMP/u.out")" "^unit  test_broken \.+ FAILED \(exit 1\)$" "its line says FAILED"
like "$(<"$TMP/u.out")" "^    \| \[  FAILED  \] test_x$" "its whole output is shown"
like "$(<"$TMP/u.out")" "^e2e   not run: unit tests failed$" "e2e does not run after it"

note "---- PGOLAB_CI=1: skips of checks CI must run fail"
PGOLAB_CI=1 bash "$CHECK" --log="$TMP/ci.log" --e2e="$S" >"$TMP/ci.out" 2>&1
is "$?" 1 "a skip under PGOLAB_CI=1: exit 1"
like "$(<"$TMP/ci.out")" "^    \| not ok 2 - skipped under PGOLAB_CI=1 \(CI must run it\): needs the moon; runs in space\.t$" \
    "the skip is a failing check that says why"
like "$(<"$TMP/ci.out")" "^    \| ok 4 # skip lost a race; runs only here$" "skip_anywhere still skips"
t skips 'ok "first" true; skip_anywhere 1 "lost a race; runs only here"'
PGOLAB_CI=1 bash "$CHECK" --log="$TMP/ci2.log" --e2e="$S" >"$TMP/ci2.out" 2>&1
is "$?" 0 "only skip_anywhere under PGOLAB_CI=1: exit 0"

# The unit side: UNIT_SKIP with a place the check runs instead passes under PGOLAB_CI=1
# (test_mysql's server tests run in tests/e2e/mysql_driver.t); one without fails.
U=$REPO_DIR/build/tests/test_mysql
if [ -x "$U" ] && [ "$U" -nt "$REPO_DIR/tests/unit/test_mysql.c" ] && [ "$U" -nt "$REPO_DIR/tests/unit/unit_helpers.h" ]; then
    PGOLAB_CI=1 "$U" >"$TMP/m.out" 2>&1
    is "$?" 0 "test_mysql under PGOLAB_CI=1: its server tests skip (they run in mysql_driver.t)"
    like "$(<"$TMP/m.out")" "^SKIP: test_server_checksums: needs a MariaDB server \(PGOLAB_TEST_MYSQL_SOCKET\); runs in tests/e2e/mysql_driver\.t" \
        "the unit skip says what it needs and where it runs"
else
    skip 2 "needs build/tests/test_mysql built from the current sources (make unit or make check builds it); runs only here"
fi
cat >"$TMP/skipnull.c" <<EOF
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_helpers.h"
static void test_needs_x(void **state) { (void)state; UNIT_SKIP("x", NULL); }
int main(void) { const struct CMUnitTest t[] = { cmocka_unit_test(test_needs_x) }; return cmocka_run_group_tests(t, NULL, NULL); }
EOF
if cc -std=c11 -D_GNU_SOURCE -I"$REPO_DIR/tests/unit" -o "$TMP/skipnull" "$TMP/skipnull.c" -lcmocka 2>"$TMP/cc.err"; then
    "$TMP/skipnull" >"$TMP/sn.out" 2>&1
    is "$?" 0 "UNIT_SKIP(need, NULL) without PGOLAB_CI: a skip (exit 0)"
    PGOLAB_CI=1 "$TMP/skipnull" >"$TMP/sn.out" 2>&1
    isnt "$?" 0 "UNIT_SKIP(need, NULL) under PGOLAB_CI=1: a failure"
    like "$(<"$TMP/sn.out")" "PGOLAB_CI is set: CI must run test_needs_x \(needs x\)" "... that says why"
else
    bail_out "cannot compile a cmocka test: $(head -3 "$TMP/cc.err")"
fi
done_testing
