#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_resume_steps.t: an interrupted build and a recipe edited in between (a MySQL build takes
# hours, and recipes are edited while one runs). The mariadb recipe on the stand-in (each
# phase in its own build directory): interrupted inside the instrumented build's build step,
# then
# - the install step edited: the instrumented build resumes (its finished configure step not
#   redone) and says that only steps it had not begun changed;
# - the build step edited: it starts again from a clean build directory and names the step;
# - the same command again: it resumes without a word about the recipe.
. "$(dirname "$0")/lib.sh"

cleanup() {
    [ -n "${BGPID:-}" ] && kill -KILL -- "-$BGPID" 2>/dev/null
    _e2e_cleanup
}
on_exit cleanup

standin_setup # SRC, RECIPES; derive, count: lib.sh
derive mariadb standin-resume

WD=$TMP/wd
RUN=(--source="$SRC" --workdir="$WD" --variants=baseline,pgo --measure=off --train-time=2
     --table-size=1000 --results="$TMP/results.db")

# held NAME: pgolab pgo until the instrumented build's build step holds, then Ctrl-C (exit 2);
# $TMP/NAME.err is its stderr
held() {
    touch "$TMP/hold"
    rm -f "$TMP/hold.held"
    STANDIN_HOLD=$TMP/hold setsid "$PGOLAB" pgo standin-resume "${RUN[@]}" \
        >"$TMP/$1.out" 2>"$TMP/$1.err" &
    BGPID=$!
    poll 1200 0.1 test -e "$TMP/hold.held"
    ok "$1: the instrumented build reached the hold in its build step" test -e "$TMP/hold.held"
    kill -INT -- "-$BGPID"
    wait "$BGPID"
    is "$?" 2 "$1: interrupted, exit 2"
    BGPID=
    rm -f "$TMP/hold"
}

held first
ROOT=$(ls -d "$WD"/standin-resume-gcc-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
LOG=$ROOT/instrumented/build.log
is "$(count "$LOG" "^\$ cd .* && cmake $SRC ")" 1 "first: the instrumented build configured once"

note "---- the install step edited while the build was interrupted"
derive mariadb standin-resume '(.steps[] | select(.name == "install")) |= (.env = ((.env // []) + ["PGOLAB_TEST_EDIT=install"]))'
held install
like "$(cat "$TMP/install.err")" "^resuming instrumented's interrupted build: the recipe's steps after build changed since the interrupted build began; they run as now written$" \
    "install edited: the instrumented build resumes and says why"
like "$(cat "$TMP/install.err")" "^rebuilding baseline: the recipe's build steps changed since the cached build$" \
    "install edited: the finished baseline is rebuilt, with its reason"
is "$(count "$LOG" "^\$ cd .* && cmake $SRC ")" 1 "install edited: the finished configure step is not redone"
is "$(count "$LOG" "^\$ cd .* && cmake --build ")" 2 "install edited: the interrupted build step runs again"

note "---- the build step edited"
derive mariadb standin-resume '(.steps[] | select(.name == "install" or .name == "build")) |= (.env = ((.env // []) + ["PGOLAB_TEST_EDIT=build"]))'
held build
like "$(cat "$TMP/build.err")" "^starting instrumented's interrupted build again from a clean build directory: the recipe's step build changed since the interrupted build began$" \
    "build edited: the instrumented build starts again and names the step"
unlike "$(cat "$TMP/build.err")" "^resuming " "build edited: ... and is not resumed"
is "$(count "$LOG" "^\$ cd .* && cmake $SRC ")" 1 "build edited: a new build log, configured once"

note "---- the same command again: an ordinary resume"
held same
like "$(cat "$TMP/same.err")" "^resuming instrumented's interrupted build at its step build \(1 of [0-9]+ steps done; what the build tool finished is kept\)$" \
    "same command: says which step it resumes"
unlike "$(cat "$TMP/same.err")" "recipe|^starting |^rebuilding " "same command: no word about the recipe"
is "$(count "$LOG" "^\$ cd .* && cmake $SRC ")" 1 "same command: the configure step is not redone"
is "$(count "$LOG" "^\$ cd .* && .*cmake --build ")" 2 "same command: the interrupted build step runs again"
ok "no half instrumented variant (no prefix)" test ! -e "$ROOT/instrumented/prefix"
done_testing
