#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_exam.t: the profile against what is measured (src/pgo/exam.c) on the stand-in (the mariadb
# recipe; tests/standin runs the real MariaDB server as its child): trained on
# oltp_point_select and measured on oltp_read_only, the measured workload runs once on the
# instrumented build into an exam profile of its own, and the summary shows its hottest
# functions, named from the build's notes, with their counter sums per transaction in the exam
# and in the training. A second run reuses the exam profile (cached); a measured workload that
# is the trainer needs no exam, and --measure=off runs none. (Which functions a trainer left
# cold is asserted in the unit tests, test_exam.c, on two real profiles.)
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive: lib.sh
derive mariadb standin-exam

WD=$TMP/wd
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000
     --threads=1 --rounds=1 --time=1 --results="$TMP/r.db")

pgo first standin-exam "${RUN[@]}" --bench=oltp_read_only
is "$RC" 0 "first run: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/first.err")"
OUT=$(<"$TMP/first.out")
like "$OUT" "^  exam +oltp_read_only against trainer oltp_point_select: its [0-9]+ hottest functions on the instrumented build, counter sums per transaction$" \
    "summary: the exam of the measured workload against the trainer"
TABLE=$(awk '/^  exam /{on=1; next} on && /^                  [a-z]/{print} on && /^$/{exit}' <<<"$OUT" | sed 1d)
ROWS=$(grep -c . <<<"$TABLE")
ok "summary: 1 to 10 functions ($ROWS)" test "$ROWS" -ge 1 -a "$ROWS" -le 10
is "$(grep -Evc '^ +(standin|statement):[a-z_]+ +([0-9]+\.[0-9]|<0\.1) +([0-9]+\.[0-9]|<0\.1|0)( +cold)?$' <<<"$TABLE")" 0 \
    "summary: each row a function of the stand-in named from the notes, with both counts"
like "$(head -1 <<<"$TABLE")" "^ +(standin|statement):" "summary: the hottest first"
like "$(<"$TMP/first.err")" "^exam: oltp_read_only on the instrumented build in [0-9]+ s" \
    "off a terminal: the exam's phase line"
ROOT=$(ls -d "$WD"/standin-exam-gcc-*/ | head -1)
ROOT=${ROOT%/}
ok "the exam profile is kept ($ROOT/exam-oltp_read_only)" \
    test -n "$(ls "$ROOT"/exam-oltp_read_only/*.gcda 2>/dev/null)"
like "$(<"$ROOT/exam-oltp_read_only.log")" "transactions: +[1-9]" "the exam run's log has its transactions"

pgo again standin-exam "${RUN[@]}" --bench=oltp_read_only
is "$RC" 0 "second run: exit 0"
like "$(<"$TMP/again.err")" "^exam: oltp_read_only, the profile of an earlier run \(cached\)$" \
    "second run: the exam profile is cached"
TABLE2=$(awk '/^  exam /{on=1; next} on && /^                  [a-z]/{print} on && /^$/{exit}' <"$TMP/again.out" | sed 1d)
is "$TABLE2" "$TABLE" "second run: the same table"

# the exam is recorded with the experiment (settings.pgo.exam) and `pgolab report` repeats its
# warnings after the tables, as pgo printed them
EXAMJ=$(sq "$TMP/r.db" "SELECT json_extract(settings_json, '\$.pgo.exam') FROM experiments WHERE id = 1")
is "$(jq -r '.[0].workload + " " + .[0].trainer + " " + (.[0].functions | length | tostring)' <<<"$EXAMJ")" \
    "oltp_read_only oltp_point_select $ROWS" "results: settings.pgo.exam holds the exam, its $ROWS functions"
is "$(jq -r '.[0].functions[].function' <<<"$EXAMJ")" "$(awk '{print $1}' <<<"$TABLE")" \
    "results: the same functions, in the summary's order"
is "$(jq -r '[.[0].functions[] | select(.cold)] | length' <<<"$EXAMJ")" "$(grep -c ' cold$' <<<"$TABLE")" \
    "results: the same functions marked cold"
"$PGOLAB" report --results="$TMP/r.db" --experiment=1 >"$TMP/rep1.out" 2>/dev/null
is "$(grep '^  warning' "$TMP/rep1.out")" "$(grep '^  warning' "$TMP/first.out" | sort -u)" \
    "pgolab report: the exam's warnings as pgo printed them"

# a bare --resume: the newest unfinished pgo experiment with the settings it recorded (its
# --bench=oltp_read_only, not the default workloads), resolved before anything runs
sq "$TMP/r.db" "UPDATE experiments SET status = 'interrupted', finished_at = NULL WHERE id = 2"
sq "$TMP/r.db" "DELETE FROM runs WHERE experiment_id = 2 AND id = (SELECT max(id) FROM runs WHERE experiment_id = 2)"
pgo bare standin-exam --source="$SRC" --workdir="$WD" --results="$TMP/r.db" --resume
is "$RC" 0 "bare --resume: exit 0"
[ "$RC" = 0 ] || diag "$(tail -5 "$TMP/bare.err")"
like "$(<"$TMP/bare.err")" "^--resume: experiment 2, the newest unfinished pgo experiment in $TMP/r.db$" \
    "bare --resume: names the experiment it continues"
like "$(<"$TMP/bare.err")" "^resuming experiment 2 in $TMP/r.db: 1 of 2 runs recorded$" \
    "bare --resume: continues it with its recorded settings (no refusal over the defaults)"
unlike "$(<"$TMP/bare.err")" "oltp_read_write" "bare --resume: the default workloads play no part"
is "$(sq "$TMP/r.db" "SELECT status FROM experiments WHERE id = 2")" complete "bare --resume: complete"

pgo same standin-exam "${RUN[@]}" --bench=oltp_point_select
is "$RC" 0 "measured on the trainer's own workload: exit 0"
unlike "$(<"$TMP/same.out")" "^  exam " "... no exam (the trainer's profile is the measured workload's)"

rm -rf "$ROOT"/exam-oltp_read_only*
pgo off standin-exam "${RUN[@]}" --bench=oltp_read_only --measure=off
is "$RC" 0 "--measure=off: exit 0"
unlike "$(<"$TMP/off.out")" "^  exam " "--measure=off: no exam"
ok "--measure=off: no exam run" test ! -e "$ROOT/exam-oltp_read_only"
done_testing
