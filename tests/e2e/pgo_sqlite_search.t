#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_sqlite_search.t: `pgolab pgo sqlite --search` with a variant prefix (-O1:baseline beside
# --cc and --cflags' baseline and pgo: its own cached build directory, gated and measured with
# the others, each its own libsqlite3), stopped by Ctrl-C in the screen and in the
# confirmation, and run again each time with the same command: the builds come from the cache;
# the interrupted screen is continued (its finished runs not redone), a finished screen is
# reused as it is, the interrupted confirmation is continued; no --resume=ID is suggested (the
# hint says to run the same command again); in the end two experiments, each with exactly its
# planned runs, none twice, and the winner block with the library. Small: the shared SQLite
# amalgamation (lib.sh sqlite_amalgamation) as --source, -O0, 1000 rows, --events=25, 1 s runs.
. "$(dirname "$0")/lib.sh"
have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"
have valgrind || bail_out "valgrind not installed (make deps installs it)"
have setsid || bail_out "setsid (util-linux) not found"

sqlite_amalgamation
WD=$TMP/wd
DB=$TMP/results.db
RUN=(pgo sqlite --workdir="$WD" --source="$SQLITE_AMALG" --cflags=-O0 --variants=baseline,pgo,-O1:baseline --search
     --search-keep=2 --events=25 --train=oltp_point_select --train-time=1
     --bench=oltp_point_select --threads=1 --time=1 --rounds=3 --table-size=1000
     --results="$DB" --output="$TMP/s.json")
BGPID= WDOG=
_s_cleanup() {
    [ -z "$BGPID" ] || kill -KILL -- "-$BGPID" 2>/dev/null
    [ -z "$WDOG" ] || kill -- "-$WDOG" 2>/dev/null
    rm -rf "$TMP"
}
on_exit _s_cleanup

# start NAME: the search in the background, leading its own process group (NAME.out, .err)
start() {
    setsid "$PGOLAB" "${RUN[@]}" >"$TMP/$1.out" 2>"$TMP/$1.err" &
    BGPID=$!
    setsid bash -c "sleep 1800; kill -KILL -- -$BGPID" 2>/dev/null &
    WDOG=$!
}
runs_of() { sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = $1" 2>/dev/null || echo 0; }
# interrupt NAME WHAT ID: Ctrl-C once experiment ID has a run; exit 2, the hints, nothing left
interrupt() {
    local name=$1 what=$2 id=$3 rc
    poll 36000 0.05 eval "[ \"\$(runs_of $id)\" -ge 1 ] 2>/dev/null"
    ok "$what: experiment $id has a run" test "$(runs_of "$id")" -ge 1 || diag "$(tail -5 "$TMP/$name.err")"
    kill -INT -- "-$BGPID"
    wait "$BGPID"
    rc=$?
    kill -- "-$WDOG" 2>/dev/null
    is "$rc" 2 "$what: exit 2 after Ctrl-C"
    like "$(cat "$TMP/$name.err")" "^experiment $id interrupted: the same command again continues the search \(the runs that finished are kept and not run again\)$" \
        "$what: the engine's hint is the same command again"
    unlike "$(cat "$TMP/$name.err")" "--resume" "$what: no --resume suggested"
    poll 100 0.1 test -z "$(pgrep -g "$BGPID")"
    is "$(pgrep -g "$BGPID" | wc -l)" 0 "$what: no process of the pipeline is left"
    BGPID=
}
# ids EXP: the ids of experiment EXP's recorded runs; kept ID-LIST: those of them still there
ids() { sq "$DB" "SELECT group_concat(id) FROM (SELECT id FROM runs WHERE experiment_id = $1 ORDER BY id)"; }
kept() { sq "$DB" "SELECT group_concat(id) FROM (SELECT id FROM runs WHERE id IN ($1) ORDER BY id)"; }

note "---- 1. the builds, then Ctrl-C in the screen"
start s1
interrupt s1 "screen" 1
like "$(cat "$TMP/s1.err")" "^FATAL: --search: interrupted in the screen \(experiment 1 keeps the runs that finished\); run the same command again: it continues the screen$" \
    "screen: the search says to run the same command again"
SCREEN1=$(runs_of 1)
IDS1=$(ids 1)
cmp_ok "$SCREEN1" '<' 3 "screen: stopped early ($SCREEN1 of 3 runs kept)"
is "$(sq "$DB" "SELECT group_concat(name, ',') FROM (SELECT name FROM variants WHERE experiment_id = 1 ORDER BY idx)")" \
    "baseline,pgo,-O1:baseline" "screen: baseline, pgo and the prefixed variant"
B1=$(ls -d "$WD"/build-gcc-*/ | wc -l)
is "$B1" 2 "two build directories: --cc and --cflags', and -O1's"
# each variant is its own library, in its own build directory
is "$(sq "$DB" "SELECT count(DISTINCT library) || ' ' || count(DISTINCT sha256) FROM variants WHERE experiment_id = 1")" \
    "3 3" "screen: three libraries, three sha256"

note "---- 2. the same command: the screen continued, then Ctrl-C in the confirmation"
start s2
interrupt s2 "confirmation" 2
like "$(cat "$TMP/s2.err")" "^resuming experiment 1 in .*: $SCREEN1 of 3 runs recorded$" \
    "confirmation: the interrupted screen was continued"
unlike "$(cat "$TMP/s2.err")" "experiment 3 recorded" "confirmation: no third experiment"
is "$(grep -c '(cached)$' "$TMP/s2.err")" 5 \
    "confirmation: amalgamation, the builds of both groups, training, pgo build from the cache"
is "$(runs_of 1)" 3 "the screen is complete: 3 runs"
is "$(kept "$IDS1")" "$IDS1" "... its runs from before Ctrl-C kept, not run again"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 1")" complete "... and marked complete"
like "$(cat "$TMP/s2.err")" "^FATAL: --search: interrupted in the confirmation \(experiment 2 keeps the runs that finished; the screen is experiment 1\); run the same command again: it reuses the screen and continues the confirmation$" \
    "confirmation: the search says to run the same command again"
CONF1=$(runs_of 2)
IDS2=$(ids 2)
cmp_ok "$CONF1" '<' 9 "confirmation: stopped early ($CONF1 of 9 runs kept)"

note "---- 3. the same command: the screen reused, the confirmation continued to the winner"
timeout 1200 "$PGOLAB" "${RUN[@]}" >"$TMP/s3.out" 2>"$TMP/s3.err"
is "$?" 0 "finish: exit 0" || diag "$(tail -5 "$TMP/s3.err")"
like "$(cat "$TMP/s3.out")" "^experiment 1: complete, with these builds and settings: reused, not measured again" \
    "finish: the complete screen was reused"
unlike "$(cat "$TMP/s3.err")" "resuming experiment 1" "finish: the screen not resumed again"
like "$(cat "$TMP/s3.err")" "^resuming experiment 2 in .*: $CONF1 of 9 runs recorded$" \
    "finish: the interrupted confirmation was continued"
is "$(sq "$DB" "SELECT count(*) FROM experiments")" 2 "finish: two experiments in all"
is "$(sq "$DB" "SELECT group_concat(status) FROM experiments")" "complete,complete" "... both complete"
is "$(runs_of 2)" 9 "the confirmation: 3 variants x 3 rounds"
is "$(kept "$IDS2")" "$IDS2" "... its runs from before Ctrl-C kept, not run again"
WIN=$(sed -n 's/^search: winner \([^ ]*\) .*/\1/p; s/^search: best by the simulation: \([^,]*\),.*/\1/p' "$TMP/s3.out")
is "$(sq "$DB" "SELECT count(*) FROM variants WHERE experiment_id = 2 AND idx > 0 AND name = '$WIN'")" 1 \
    "the block names a confirmed candidate: '$WIN'"
LIB=$(sed -n 's/^  library  *//p' "$TMP/s3.out")
is "$LIB" "$(sq "$DB" "SELECT library FROM variants WHERE experiment_id = 2 AND name = '$WIN'")" \
    "its library, as the results database has it"
ok "... which exists" test -s "$LIB"
is "$(jq -r '[.search.screen_experiment, .search.confirm_experiment, .search.winner.library] | join(" ")' "$TMP/s.json")" \
    "1 2 $LIB" "--output: the search with its library"
done_testing
