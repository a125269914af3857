#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_train_user.t: what happens to a trainer's profile, on the stand-in (tests/standin, the real
# mariadbd as its child) and the real recipes/mariadb.json.
# Training user: pgolab runs as root and the stand-in's serving processes switch to user nobody
# (STANDIN_TRAIN_USER), as PostgreSQL's backends run as postgres: the instrumented
# `BINARY --version` and bootstrap (root) create the profile files first, and nobody's
# process must still add its counts to them: no libgcov "profiling:" line in the server's log
# (kept as the trainer's LOG.server), every .gcda writable for nobody, the profile check's
# counts in the summary (main's among them), the counts saved beside the profile. (Where the
# counts are lost, the profile check refuses the profile: tests/unit/test_profile_check.c.)
# A removed cached profile is retrained and said so; an edited source rebuilds and says why; a
# training server killed mid-run (STANDIN_KILL_AFTER) is refused with one line naming the
# trainer, and the next run retrains.
. "$(dirname "$0")/lib.sh"

cleanup() {
    [ -n "${WD:-}" ] && rm -rf "$WD"
    _e2e_cleanup
}
on_exit cleanup

[ "$(id -u)" = 0 ] || bail_out "needs root: the stand-in's processes switch to user nobody (CI runs as root)"
id nobody >/dev/null 2>&1 || bail_out "no user nobody"
standin_setup # SRC, RECIPES; derive, pgo, info: lib.sh
derive mariadb standin-user
# the serving processes run as nobody: the work directory must be reachable for nobody
WD=$(mktemp -d /var/tmp/pgolab-train-user.XXXXXX)
chmod 0711 "$WD"
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000 --measure=off)

note "---- a serving process of another user adds its counts to files root created"
STANDIN_TRAIN_USER=nobody pgo user standin-user "${RUN[@]}"
is "$RC" 0 "trains as nobody: exit 0" || diag "$(tail -20 "$TMP/user.err")"
ROOT=$(ls -d "$WD"/standin-user-gcc-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
PROF=$ROOT/profile-oltp_point_select
SLOG=$ROOT/train-oltp_point_select.log.server
is "$(grep -c '^standin: worked as user nobody$' "$SLOG" 2>/dev/null)" 1 "nobody's process ran (the server's log, kept)"
is "$(grep -c 'profiling:' "$SLOG" 2>/dev/null)" 0 "no counts lost: libgcov printed no 'profiling:' line" ||
    diag "$(grep -m3 'profiling:' "$SLOG")"
gcda=$(ls "$PROF"/*.gcda 2>/dev/null | wc -l)
cmp_ok "$gcda" '>=' 1 "the trainer's profile has .gcda files ($gcda)"
unwritable=0
for f in "$PROF"/*.gcda; do
    su -s /bin/sh nobody -c "test -w '$f'" || unwritable=$((unwritable + 1))
done
is "$unwritable" 0 "every .gcda file is writable for nobody"
like "$(cat "$TMP/user.out")" "^  training +oltp_point_select, 2 s each, 2 threads: profile counts in [1-9][0-9]* of $gcda objects, [1-9][0-9]* of [1-9][0-9]* functions, [^;]* counts in all; main [1-9]" \
    "summary: the profile check's counts, main's among them"
like "$(head -1 "$PROF.health")" "^pgolab-profile-health: 1$" "the counts are saved beside the profile"
ok "the notes of the hot function's object are kept beside the instrumented build" \
    test -s "$ROOT/instrumented/notes/CMakeFiles/mariadbd.dir/standin.c.gcno"
is "$(find "$ROOT/instrumented/notes" -name '*.gcno' | wc -l)" 1 "... and only those (statement.c's are not)"

note "---- a removed cached profile is retrained, and said so"
rm -rf "$PROF"
pgo removed standin-user "${RUN[@]}"
is "$RC" 0 "removed profile: exit 0"
like "$(cat "$TMP/removed.err")" "retraining oltp_point_select: its profile $PROF was removed" \
    "removed profile: says it retrains, and why"
ok "removed profile: trained again" test -d "$PROF"
unlike "$(grep '^  training' "$TMP/removed.out")" "\(cached\)" "removed profile: the training is not 'cached'"
pgo cached standin-user "${RUN[@]}"
like "$(grep '^  training' "$TMP/cached.out")" "main [1-9].*\(cached\)$" "a cached profile: its saved counts, 'cached'"

note "---- an edited source rebuilds, and says why"
echo "/* edited */" >>"$SRC/standin.c"
pgo edited standin-user "${RUN[@]}"
is "$RC" 0 "edited source: exit 0"
like "$(cat "$TMP/edited.err")" "rebuilding baseline: the source tree changed since the cached build" \
    "edited source: says the baseline is rebuilt, and why"
like "$(cat "$TMP/edited.err")" "rebuilding instrumented: the source tree changed since the cached build" \
    "edited source: says the instrumented build is rebuilt, and why"

note "---- a training server killed mid-run: refused, named, and retrained by the next run"
rm -rf "$PROF"
STANDIN_KILL_AFTER=1 pgo killed standin-user "${RUN[@]}" --train-time=5
is "$RC" 1 "killed training server: exit 1"
like "$(cat "$TMP/killed.err")" "training oltp_point_select: the instrumented server died during the training \(its log is " \
    "killed training server: one line names the trainer and the cause"
like "$(cat "$TMP/killed.err")" "training oltp_point_select failed: its profile $PROF is lost \(the partial data was discarded, nothing merged from it\); the same command trains it again once the cause above is fixed" \
    "killed training server: the next names the lost profile and how to go on"
ok "killed training server: nothing of the partial profile is left" test ! -e "$PROF"
is "$(ls -A "$ROOT/profile-raw" 2>/dev/null | wc -l)" 0 "killed training server: the raw profile directory is empty"
ok "killed training server: no profile kept" test ! -e "$PROF.stamp"
pgo again standin-user "${RUN[@]}"
is "$RC" 0 "the next run: exit 0"
unlike "$(grep '^  training' "$TMP/again.out")" "\(cached\)" "the next run retrained"

ok "no stand-in server of this test left running" test -z "$(pgrep -f -- "^$WD/")"
done_testing
