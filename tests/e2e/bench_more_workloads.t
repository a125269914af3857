#!/bin/bash
# bench_more_workloads.t: the seven sysbench workloads beyond the four OLTP mixes, on SQLite:
# oltp_update_index, oltp_update_non_index, oltp_delete, oltp_insert, select_random_points,
# select_random_ranges, bulk_insert. Each prepares, runs a fixed --events count and cleans up;
# the r/w/o split per event is sysbench's (reference/sysbench.md §3), and each workload's
# effect on the data is checked with the sqlite3 CLI (updates keep the row count, deletes
# remove rows, inserts add them, bulk_insert stores exactly one row per event in one table per
# thread). select_random_* refuse --tables > 1; prewarm is MySQL only.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"
DB=$TMP/sb.db
SIZE=300
EV=60
common=(--sqlite-db="$DB" --table-size=$SIZE --rand-seed=11)

# counts FILE: "events reads writes other errors" of a --format=json report
counts() {
    perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
        print join(" ", map { $j->{$_} } qw(events reads writes other ignored_errors))' <"$1"
}

run_json() { # run_json NAME WORKLOAD ARGS...: run with --format=json into $TMP/NAME.json
    local name=$1 wl=$2
    shift 2
    "$PGOLAB" bench "$wl" run "${common[@]}" --events=$EV --format=json "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
    is "$?" 0 "$name: run exit 0"
}

prep() {
    "$PGOLAB" bench "$1" prepare "${common[@]}" "${@:2}" >"$TMP/prep.out" 2>&1
    is "$?" 0 "$1: prepare exit 0"
}
clean() { "$PGOLAB" bench "$1" cleanup "${common[@]}" "${@:2}" >/dev/null 2>&1; }

# ---- updates: one write per event, row count unchanged, the updated column really changes
prep oltp_update_index
before=$(sq "$DB" "SELECT sum(k) FROM sbtest1")
run_json ui oltp_update_index
is "$(counts "$TMP/ui.json")" "$EV 0 $EV 0 0" "oltp_update_index: $EV events, 0/$EV/0"
is "$(sq "$DB" "SELECT sum(k) - $before FROM sbtest1")" "$EV" "oltp_update_index: sum(k) grew by one per event"
run_json ui3 oltp_update_index --index-updates=3
is "$(counts "$TMP/ui3.json")" "$EV 0 $((3 * EV)) 0 0" "--index-updates=3: 3 writes per event"
before=$(sq "$DB" "SELECT group_concat(c) FROM sbtest1")
run_json un oltp_update_non_index
is "$(counts "$TMP/un.json")" "$EV 0 $EV 0 0" "oltp_update_non_index: 0/$EV/0"
isnt "$(sq "$DB" "SELECT group_concat(c) FROM sbtest1")" "$before" "oltp_update_non_index: c values changed"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1 WHERE c NOT GLOB '[0-9]*-*'")" 0 "oltp_update_non_index: c keeps the template's shape"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1")" $SIZE "updates keep the row count"

# ---- oltp_delete: writes + others = events; rows removed = writes
run_json del oltp_delete
read -r ev r w o e < <(counts "$TMP/del.json")
is "$ev $r $e" "$EV 0 0" "oltp_delete: $EV events, no reads, no errors"
is "$((w + o))" "$EV" "oltp_delete: every event is one DELETE (write, or other when the row was gone)"
cmp_ok "$w" '>' 0 "oltp_delete: some DELETEs removed a row"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1")" "$((SIZE - w))" "oltp_delete: rows removed = writes"
clean oltp_update_index

# ---- oltp_insert: one write per event, the table grows by EV (auto-inc ids above SIZE)
prep oltp_insert --tables=2
run_json ins oltp_insert --tables=2
is "$(counts "$TMP/ins.json")" "$EV 0 $EV 0 0" "oltp_insert: 0/$EV/0"
is "$(sq "$DB" "SELECT (SELECT count(*) FROM sbtest1) + (SELECT count(*) FROM sbtest2)")" "$((2 * SIZE + EV))" \
    "oltp_insert: $EV rows added over both tables"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1 WHERE id > $SIZE AND c GLOB '[0-9]*-*' AND k BETWEEN 1 AND $SIZE")" \
    "$(sq "$DB" "SELECT count(*) - $SIZE FROM sbtest1")" "oltp_insert: new rows have server-assigned ids, k in 1..table-size, c from the template"
clean oltp_insert --tables=2
# --auto-inc=off: prepare creates empty tables; ids are client-generated unique signed INTs
prep oltp_insert --auto-inc=off
unlike "$(<"$TMP/prep.out")" "Inserting" "oltp_insert --auto-inc=off: prepare inserts no rows"
run_json insu oltp_insert --auto-inc=off --threads=2
is "$(sq "$DB" "SELECT count(*) || ' ' || count(DISTINCT id) FROM sbtest1")" "$EV $EV" \
    "oltp_insert --auto-inc=off: $EV rows with distinct ids"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1 WHERE id < -2147483648 OR id > 2147483647")" 0 "... inside the signed INT range"
cmp_ok "$(sq "$DB" "SELECT max(id) - min(id) FROM sbtest1")" '>' 1000000 "... spread over it, not a counter"
clean oltp_insert

# ---- select_random_*: one read per event, a result set each
prep select_random_points
run_json rp select_random_points --threads=2
is "$(counts "$TMP/rp.json")" "$EV $EV 0 0 0" "select_random_points: $EV/0/0"
run_json rr select_random_ranges --number-of-ranges=4 --delta=20
is "$(counts "$TMP/rr.json")" "$EV $EV 0 0 0" "select_random_ranges: $EV/0/0"
for w in select_random_points select_random_ranges; do
    for cmd in prepare run cleanup; do
        "$PGOLAB" bench $w $cmd "${common[@]}" --tables=2 >"$TMP/bad.out" 2>"$TMP/bad.err"
        is "$?" 1 "$w $cmd --tables=2: exit 1"
        is "$(<"$TMP/bad.err")" "FATAL: --tables=2: $w uses sbtest1 only (expected --tables=1)" "$w $cmd --tables=2: message"
    done
done
clean select_random_points

# ---- bulk_insert: one table per thread, (id, k) only, one row per event
prep bulk_insert --threads=2
is "$(sq "$DB" "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)")" \
    "sbtest1,sbtest2" "bulk_insert --threads=2: prepare creates sbtest1..2"
is "$(sq "$DB" "SELECT group_concat(name) FROM pragma_table_info('sbtest1')")" "id,k" "bulk_insert: tables are (id, k)"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1")" 0 "bulk_insert: prepare inserts nothing"
"$PGOLAB" bench bulk_insert run "${common[@]}" --threads=2 --events=50000 --format=json >"$TMP/bulk.json" 2>"$TMP/bulk.err"
is "$?" 0 "bulk_insert run: exit 0"
read -r ev r w o e < <(counts "$TMP/bulk.json")
is "$ev" 50000 "bulk_insert: 50000 events"
is "$(sq "$DB" "SELECT (SELECT count(*) FROM sbtest1) + (SELECT count(*) FROM sbtest2)")" 50000 "bulk_insert: one row per event"
is "$(sq "$DB" "SELECT count(*) FROM sbtest1 WHERE id <> k")" 0 "bulk_insert: rows are (n, n)"
cmp_ok "$w" '>=' 2 "bulk_insert: at least one multi-row INSERT per thread"
cmp_ok "$w" '<' 100 "bulk_insert: rows are batched (fewer INSERTs than rows)"
# a second run without cleanup: ids restart at 1, so each thread's first INSERT fails for good;
# the events buffered into it are no transactions (the summary must not count them)
"$PGOLAB" bench bulk_insert run "${common[@]}" --threads=2 --events=200000 --format=json >"$TMP/bulk2.json" 2>"$TMP/bulk2.err"
is "$?" 1 "bulk_insert run again without cleanup: exit 1"
like "$(<"$TMP/bulk2.err")" "^FATAL: SQL error \\((thread #[01]|2 of 2 threads)\\): UNIQUE constraint failed: sbtest[12]\\.id( \\[error 19\\])?; table sbtest[12], statement: INSERT INTO sbtest[12] VALUES ?\\(1, ?1\\).*\\.\\.\\.$" \
    "bulk_insert run again: the constraint error, the table and the statement (cut)"
read -r ev r w o e < <(counts "$TMP/bulk2.json")
is "$ev/$w" "0/0" "bulk_insert run again: no events and no writes counted for the failed INSERTs"
is "$(sq "$DB" "SELECT (SELECT count(*) FROM sbtest1) + (SELECT count(*) FROM sbtest2)")" 50000 "bulk_insert run again: the tables are unchanged"
"$PGOLAB" bench bulk_insert cleanup "${common[@]}" --threads=2 >"$TMP/bc.out" 2>&1
like "$(<"$TMP/bc.out")" "Dropping table 'sbtest2'" "bulk_insert cleanup drops one table per thread"
is "$(sq "$DB" "SELECT count(*) FROM sqlite_master WHERE type = 'table'")" 0 "bulk_insert cleanup: no tables left"

# ---- prewarm is MySQL only
"$PGOLAB" bench oltp_read_only prewarm "${common[@]}" >/dev/null 2>"$TMP/pw.err"
is "$?" 1 "prewarm on SQLite: exit 1"
is "$(<"$TMP/pw.err")" "FATAL: prewarm is MySQL only (--db-driver=mysql), not sqlite" "prewarm on SQLite: message"

done_testing
