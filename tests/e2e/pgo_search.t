#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_search.t: `pgolab pgo TARGET --search` (src/pgo/search.c) on the stand-in (the mariadb
# recipe for tests/standin). The refusals come first, one line each and before anything is
# built: --search with --measure=instructions or off, with --resume, with fewer than 2
# candidates (also for a library recipe, sqlite), --search-keep without --search. Then
# --variants=baseline,pgo,lto,official --search --search-keep=1: the screen is a pgo experiment
# by instructions with baseline and every candidate (pgo, lto; never official); the
# confirmation is a second one by time with baseline, the screen's best by the stored
# estimated cycles per transaction, and official; the printed ranking follows the stored
# numbers (its changes within 0.01 points of them); the block printed last names the winner
# (or the best by the simulation), its flags as the results database has them, and its
# install prefix, which exists; --output has the same as "search".
# The stand-in runs Debian's mariadbd as its child, which callgrind follows only with
# --trace-children=yes: a `valgrind` first on PATH adds it, so the screen counts mariadbd's
# connection threads as it would a real MariaDB build's (the stand-in's builds differ only in
# the stand-in itself, so the changes are small; the test checks the order, not a gain).
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo, errors_of: lib.sh
have valgrind || bail_out "valgrind not installed (make deps installs it)"
have sqlite3 || bail_out "sqlite3 not installed (make deps installs it)"
derive mariadb standin-search
mkdir -p "$TMP/bin"
printf '#!/bin/sh\nexec %s --trace-children=yes "$@"\n' "$(command -v valgrind)" >"$TMP/bin/valgrind"
chmod 755 "$TMP/bin/valgrind"
export PATH="$TMP/bin:$PATH"
WD=$TMP/wd
DB=$TMP/results.db
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000
     --bench=oltp_point_select --threads=1 --rounds=2 --time=1 --results="$DB")

note "---- refusals: one line each, before anything"
refused() { # refused NAME EXPECTED-ERE WHAT ARGS...
    local name=$1 re=$2 what=$3
    shift 3
    pgo "$name" standin-search "${RUN[@]}" "$@"
    is "$RC" 1 "$what: exit 1"
    like "$(errors_of "$TMP/$name.err")" "$re" "$what: the message"
    is "$(errors_of "$TMP/$name.err" | wc -l | tr -d ' ')" 1 "$what: one line"
}
refused instr "^FATAL: --search with --measure=instructions: a search measures by itself \(a screen by instructions, then a confirmation by time\); leave --measure out$" \
    "--search --measure=instructions" --search --measure=instructions
refused off "^FATAL: --search with --measure=off: " "--search --measure=off" --search --measure=off
refused resume "^FATAL: --search with --resume: a search continues by itself; run the same command again without --resume" \
    "--search --resume" --search --resume
refused few "^FATAL: --search: --variants has 1 candidate besides baseline and official; a search needs at least 2 " \
    "one candidate" --search --variants=baseline,pgo,official
refused keep "^FATAL: --search-keep=3: the number of candidates --search confirms; add --search$" \
    "--search-keep without --search" --search-keep=3
refused keep0 "^FATAL: --search-keep=0: expected 1 to 100 candidates$" "--search-keep=0" \
    --search --search-keep=0
ok "refusals: no work directory" test ! -e "$WD"
# a library recipe searches too (pgo_sqlite_search.t), its pgo always a candidate
pgo lib sqlite --search --variants=baseline --workdir="$TMP/sq" --results="$DB"
is "$RC" 1 "a library recipe: one candidate (its pgo) refused"
like "$(errors_of "$TMP/lib.err")" "^FATAL: --search: --variants has 1 candidate besides baseline and official; a search needs at least 2 \(e.g. --variants=baseline,pgo,clang:pgo,-O3:pgo\)$" "... saying so"
ok "nothing recorded" test ! -e "$DB"

note "---- baseline, pgo, lto, official: screen both candidates, confirm the best"
pgo s standin-search "${RUN[@]}" --variants=baseline,pgo,lto,official --search --search-keep=1 \
    --events=25 --output="$TMP/s.json"
is "$RC" 0 "search: exit 0" || diag "$(errors_of "$TMP/s.err" | tail -5)"
like "$(cat "$TMP/s.out")" "Exact profile: instructions per function \(callgrind" \
    "the screen: each candidate's functions against the baseline's, exactly"
like "$(cat "$TMP/s.out")" "  per function    pgolab report --experiment=1 --results=$(printf '%s' "$DB" | sed 's/[]*^$()+?{}|.[\\]/\\&/g') \(the screen" \
    "the winner says where its per-function difference is"
is "$(sq "$DB" "SELECT count(*) FROM experiments")" 2 "two experiments"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.measure') || ' ' || json_extract(settings_json, '\$.events') || ' ' || json_extract(settings_json, '\$.rounds') || ' ' || json_extract(settings_json, '\$.pgo.search') FROM experiments WHERE id = 1")" \
    "instructions 25 1 screen" "the screen: by instructions, --events, 1 round"
is "$(sq "$DB" "SELECT group_concat(name, ',') FROM (SELECT name FROM variants WHERE experiment_id = 1 ORDER BY idx)")" \
    "baseline,lto,pgo" "the screen: baseline and every candidate, not official"
# the stored estimated cycles per transaction of the screen, best (lowest) first
cycles() { sq "$DB" "SELECT v.name, json_extract(r.report_json, '\$.callgrind.est_cycles_per_transaction') FROM runs r JOIN variants v ON v.experiment_id = r.experiment_id AND v.idx = r.variant_idx WHERE r.experiment_id = 1 AND v.name $1 ORDER BY 2"; }
BASE=$(cycles "= 'baseline'" | cut -d'|' -f2)
RANKED=$(cycles "!= 'baseline'")
BEST=$(echo "$RANKED" | head -1 | cut -d'|' -f1)
ok "the screen stored estimated cycles for baseline and both candidates" \
    test "$(echo "$RANKED" | grep -c '|[0-9]')" = 2 -a -n "$BASE"
is "$(sq "$DB" "SELECT ifnull(json_extract(settings_json, '\$.measure'), 'time') || ' ' || json_extract(settings_json, '\$.pgo.search') FROM experiments WHERE id = 2")" \
    "time confirm" "the confirmation: by time"
is "$(sq "$DB" "SELECT group_concat(name, ',') FROM (SELECT name FROM variants WHERE experiment_id = 2 ORDER BY idx)")" \
    "baseline,$BEST,official" "the confirmation: baseline, the screen's best ($BEST), official"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 2")" 6 "the confirmation: 3 variants x 2 rounds"

BLOCK=$(sed -n '/^search: the screen (experiment 1)/,$p' "$TMP/s.out")
is "$(echo "$BLOCK" | sed -n 's/^ *[0-9]\. \([^ ]*\) .*/\1/p' | tr '\n' ,)" \
    "$(echo "$RANKED" | cut -d'|' -f1 | tr '\n' ,)" "the printed ranking follows the stored estimated cycles"
i=0
while IFS='|' read -r name c; do
    i=$((i + 1))
    printed=$(echo "$BLOCK" | sed -n "s/^ *$i\. $name *\([-+][0-9.]*\)%.*/\1/p")
    want=$(calc "($BASE - $c) / $BASE * 100")
    ok "ranking $i: $name's change $printed% is the stored numbers' $want%" \
        test "$(calc "($printed - $want) < 0.01 && ($want - $printed) < 0.01")" = 1
done <<<"$RANKED"
like "$(echo "$BLOCK" | grep "^ *1\. ")" "\(kept\)$" "the best is marked kept"
unlike "$(echo "$BLOCK" | grep "^ *2\. ")" "kept" "the other is not"
WIN=$(echo "$BLOCK" | grep -E "^search: (winner|best by the simulation:) ")
like "$WIN" "^search: (winner $BEST \(confirmed by time, experiment 2\): tps [-+][0-9.]+% \(95% CI .*\) over baseline, .* over official|best by the simulation: $BEST, estimated cycles per transaction [-+][0-9.]+% against baseline; more rounds .* or a quieter machine would resolve it by time)$" \
    "the block names the winner or the best by the simulation: $BEST"
case $WIN in
"search: best"*) like "$BLOCK" "search: no kept variant is significantly faster than baseline by time \(experiment 2; tps: $BEST [-+][0-9.]+% " \
    "... saying first that nothing is significantly faster by time" ;;
*) ok "... (a significant winner)" true ;;
esac
FLAGS=$(sq "$DB" "SELECT cflags FROM variants WHERE experiment_id = 2 AND name = '$BEST'")
is "$(echo "$BLOCK" | sed -n 's/^  flags  *//p')" "$FLAGS" "its flags, as the results database has them"
like "$(echo "$BLOCK" | grep '^  compiler ')" "^  compiler +gcc " "its compiler"
is "$(echo "$BLOCK" | sed -n 's/^  variant spec  *//p')" "$BEST" "its variant spec"
PREFIX=$(echo "$BLOCK" | sed -n 's/^  install prefix  *//p')
like "$PREFIX" "^$WD/standin-search-gcc-[0-9a-f]+/[^/]+/prefix$" "its install prefix, in its build directory"
ok "... which exists" test -x "$PREFIX/bin/mariadbd"
like "$(tail -1 "$TMP/s.out")" "^  install prefix " "the block is printed last"
is "$(jq -r '[.search.screen_experiment, .search.confirm_experiment, .search.winner.variant, (.search.ranking | map(.variant) | join(",")), .search.winner.prefix] | join(" ")' "$TMP/s.json")" \
    "1 2 $BEST $(echo "$RANKED" | cut -d'|' -f1 | paste -sd,) $PREFIX" "--output: the search, its ranking and winner"
done_testing
