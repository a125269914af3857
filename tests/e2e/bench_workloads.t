#!/bin/bash
# bench_workloads.t: for every OLTP workload on SQLite, `prepare` prints sysbench's lines and
# builds the sysbench schema and data (checked with the sqlite3 CLI), `run` executes exactly the
# workload's statement mix per transaction (r/w/o split, --events exact, per-sec figures
# consistent with the total time), writes keep the table size, and `cleanup` drops the tables.
# Option variants (--point-selects, --range-selects, --skip-trx, --delete-inserts,
# --simple-ranges) change the counts as sysbench does; --tables=3 --threads=3 prepares in parallel.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"

SIZE=500
EVENTS=40
DB=$TMP/sb.db
C_RE='^[0-9]{11}(-[0-9]{11}){9}$'
PAD_RE='^[0-9]{11}(-[0-9]{11}){4}$'

# check_table DB N SIZE: sbtestN has the sysbench schema, index k_N and SIZE well-formed rows.
check_table() {
    local db=$1 n=$2 size=$3 t=sbtest$2
    is "$(sq "$db" "SELECT count(*) FROM $t")" "$size" "$t: row count = --table-size ($size)"
    is "$(sq "$db" "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('$t') ORDER BY cid)")" \
        "id,k,c,pad" "$t: columns id,k,c,pad"
    is "$(sq "$db" "SELECT name FROM pragma_table_info('$t') WHERE pk = 1")" "id" "$t: primary key is id"
    is "$(sq "$db" "SELECT name FROM pragma_index_list('$t') WHERE origin = 'c'")" "k_$n" \
        "$t: one secondary index, named k_$n"
    is "$(sq "$db" "SELECT group_concat(name) FROM pragma_index_info('k_$n')")" "k" "$t: k_$n indexes column k"
    is "$(sq "$db" "SELECT min(id) || ' ' || max(id) || ' ' || count(DISTINCT id) FROM $t")" "1 $size $size" \
        "$t: ids are 1..$size"
    is "$(sq "$db" "SELECT count(*) FROM $t WHERE k < 1 OR k > $size OR typeof(k) <> 'integer'")" "0" \
        "$t: every k is an integer in 1..$size"
    sq "$db" "SELECT c FROM $t" >"$TMP/c.txt"
    sq "$db" "SELECT pad FROM $t" >"$TMP/pad.txt"
    is "$(grep -Ec "$C_RE" "$TMP/c.txt")" "$size" "$t: every c matches the 119-char template"
    is "$(grep -Ec "$PAD_RE" "$TMP/pad.txt")" "$size" "$t: every pad matches the 59-char template"
    cmp_ok "$(sort -u "$TMP/c.txt" | wc -l)" '>' $((size * 9 / 10)) "$t: c values are random (mostly distinct)"
}

table_hash() {
    sq "$1" "SELECT id, k, c, pad FROM sbtest$2 ORDER BY id" | md5sum | cut -d' ' -f1
}

# check_counts LABEL FILE R W O [EVENTS]: the final block of a 1-thread run shows R reads,
# W writes and O other statements per transaction (and exactly EVENTS transactions if given).
check_counts() {
    local label=$1 file=$2 r=$3 w=$4 o=$5 events=${6:-}
    final_vars "$file"
    if [ -n "$events" ]; then
        is "$F_transactions" "$events" "$label: transactions == --events ($events)"
    else
        cmp_ok "$F_transactions" '>' 0 "$label: transactions > 0"
    fi
    is "$F_total" "$(calc "$F_read + $F_write + $F_other")" "$label: total = read + write + other"
    is "$F_read/$F_write/$F_other" \
        "$(calc "$F_transactions * $r")/$(calc "$F_transactions * $w")/$(calc "$F_transactions * $o")" \
        "$label: r/w/o = transactions x $r/$w/$o"
    is "$F_queries" "$F_total" "$label: queries = total"
    is "$F_total_events" "$F_transactions" "$label: total number of events = transactions"
    is "$F_ignored_errors/$F_reconnects" "0/0" "$label: no ignored errors or reconnects"
    cmp_ok "$F_total_time" '>' 0 "$label: total time > 0"
    # "total time" is printed to 0.1 ms: allow for that rounding on very short runs.
    local rel
    rel=$(calc "0.01 + 0.00005 / $F_total_time")
    near "$F_transactions_ps" "$(calc "$F_transactions / $F_total_time")" \
        "$(calc "$F_transactions_ps * $rel + 0.01")" "$label: transactions per sec = transactions / total time"
    near "$F_queries_ps" "$(calc "$F_queries / $F_total_time")" \
        "$(calc "$F_queries_ps * $rel + 0.01")" "$label: queries per sec = queries / total time"
    is "$F_fair_events_avg" "$(printf '%.4f' "$F_transactions")" "$label: fairness events avg = transactions (1 thread)"
}

# workload  reads writes other per transaction (sysbench defaults)
while read -r wl r w o; do
    note "---- $wl ($r/$w/$o)"
    rm -f "$DB" "$DB-wal" "$DB-shm"
    common=(--sqlite-db="$DB" --table-size=$SIZE)

    pg prep "${common[@]}" "$wl" prepare
    is "$RC" 0 "$wl prepare: exit 0"
    like "$(head -n 1 "$TMP/prep.out")" '^sysbench 1\.0\.20 ' "$wl prepare: sysbench banner"
    printf '%s\n' "" "Creating table 'sbtest1'..." "Inserting $SIZE records into 'sbtest1'" \
        "Creating a secondary index on 'sbtest1'..." >"$TMP/prep.want"
    ok "$wl prepare: exactly the sysbench prepare lines" diff -u "$TMP/prep.want" <(tail -n +2 "$TMP/prep.out")
    is "$(<"$TMP/prep.err")" "" "$wl prepare: nothing on stderr"
    check_table "$DB" 1 $SIZE

    before=$(table_hash "$DB" 1)
    pg run "${common[@]}" --events=$EVENTS "$wl" run
    is "$RC" 0 "$wl run --events=$EVENTS: exit 0"
    check_counts "$wl --events" "$TMP/run.out" "$r" "$w" "$o" $EVENTS
    is "$(sq "$DB" "SELECT count(*) || ' ' || min(id) || ' ' || max(id) FROM sbtest1")" "$SIZE 1 $SIZE" \
        "$wl: row count and id range unchanged after run"
    after=$(table_hash "$DB" 1)
    if [ "$w" -gt 0 ]; then
        isnt "$after" "$before" "$wl: the run changed the data"
        is "$(grep -Evc "$C_RE" <(sq "$DB" "SELECT c FROM sbtest1"))" 0 "$wl: updated c values keep the template"
    else
        is "$after" "$before" "$wl: a read-only run leaves the data unchanged"
    fi

    pg trun "${common[@]}" --time=1 "$wl" run
    is "$RC" 0 "$wl run --time=1: exit 0"
    check_counts "$wl --time=1" "$TMP/trun.out" "$r" "$w" "$o"
    cmp_ok "$F_total_time" '>=' 1 "$wl --time=1: total time >= 1 s"
    cmp_ok "$F_total_time" '<' 6 "$wl --time=1: total time < --time + 5 s"

    pg clean "${common[@]}" "$wl" cleanup
    is "$RC" 0 "$wl cleanup: exit 0"
    ok "$wl cleanup: prints Dropping table 'sbtest1'..." grep -qFx "Dropping table 'sbtest1'..." "$TMP/clean.out"
    is "$(sq "$DB" "SELECT count(*) FROM sqlite_master WHERE name LIKE 'sbtest%' OR name LIKE 'k\_%' ESCAPE '\\'")" 0 \
        "$wl cleanup: table and index are gone"
done <<'EOF'
oltp_read_write 14 4 2
oltp_read_only 14 0 2
oltp_write_only 0 4 2
oltp_point_select 1 0 0
EOF

note "---- option variants"
rm -f "$DB" "$DB-wal" "$DB-shm"
common=(--sqlite-db="$DB" --table-size=$SIZE)
pg prep "${common[@]}" oltp_read_write prepare
is "$RC" 0 "variants: prepare"

pg v1 "${common[@]}" --events=$EVENTS --point-selects=3 --range-selects=off oltp_read_write run
is "$RC" 0 "--point-selects=3 --range-selects=off: exit 0"
check_counts "read_write --point-selects=3 --range-selects=off" "$TMP/v1.out" 3 4 2 $EVENTS

pg v2 "${common[@]}" --events=$EVENTS --skip-trx=on oltp_read_write run
is "$RC" 0 "--skip-trx=on: exit 0"
check_counts "read_write --skip-trx=on" "$TMP/v2.out" 14 4 0 $EVENTS

pg v3 "${common[@]}" --events=$EVENTS --skip_trx oltp_read_only run
is "$RC" 0 "--skip_trx (bare flag, underscore spelling): exit 0"
check_counts "read_only --skip_trx" "$TMP/v3.out" 14 0 0 $EVENTS

pg v4 "${common[@]}" --events=$EVENTS --delete-inserts=2 --index-updates=0 oltp_write_only run
is "$RC" 0 "--delete-inserts=2 --index-updates=0: exit 0"
check_counts "write_only --delete-inserts=2 --index-updates=0" "$TMP/v4.out" 0 5 2 $EVENTS

pg v5 "${common[@]}" --events=$EVENTS --simple-ranges=3 --order-ranges=0 oltp_read_only run
is "$RC" 0 "--simple-ranges=3 --order-ranges=0: exit 0"
check_counts "read_only --simple-ranges=3 --order-ranges=0" "$TMP/v5.out" 15 0 2 $EVENTS

pg v6 "${common[@]}" --events=$EVENTS --point-selects=5 oltp_point_select run
is "$RC" 0 "oltp_point_select --point-selects=5: exit 0"
check_counts "oltp_point_select forces 1 point select" "$TMP/v6.out" 1 0 0 $EVENTS
is "$(sq "$DB" "SELECT count(*) FROM sbtest1")" $SIZE "variants: row count unchanged"

note "---- --tables=3 --threads=3 (parallel prepare)"
rm -f "$DB" "$DB-wal" "$DB-shm"
common=(--sqlite-db="$DB" --table-size=$SIZE --tables=3)
pg pprep "${common[@]}" --threads=3 oltp_read_write prepare
is "$RC" 0 "parallel prepare: exit 0"
[ "$RC" = 0 ] || diag "parallel prepare stderr: $(<"$TMP/pprep.err")"
ok "parallel prepare: prints Initializing worker threads..." grep -qFx "Initializing worker threads..." "$TMP/pprep.out"
for n in 1 2 3; do
    f=$TMP/pprep.out
    is "$(grep -cFx "Creating table 'sbtest$n'..." "$f")/$(grep -cFx "Inserting $SIZE records into 'sbtest$n'" "$f")/$(grep -cFx "Creating a secondary index on 'sbtest$n'..." "$f")" \
        "1/1/1" "parallel prepare: sbtest$n's three lines, once each"
    c=$(grep -nFx "Creating table 'sbtest$n'..." "$f" | head -n 1 | cut -d: -f1)
    i=$(grep -nFx "Inserting $SIZE records into 'sbtest$n'" "$f" | head -n 1 | cut -d: -f1)
    x=$(grep -nFx "Creating a secondary index on 'sbtest$n'..." "$f" | head -n 1 | cut -d: -f1)
    ok "parallel prepare: sbtest$n: create < insert < index" \
        test "${c:-0}" -gt 0 -a "${c:-0}" -lt "${i:-0}" -a "${i:-0}" -lt "${x:-0}"
    check_table "$DB" $n $SIZE
done
is "$(sq "$DB" "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)")" \
    "sbtest1,sbtest2,sbtest3" "parallel prepare: exactly the tables sbtest1..3"

pg prun "${common[@]}" --events=60 oltp_read_write run
is "$RC" 0 "run on 3 tables: exit 0"
check_counts "read_write --tables=3" "$TMP/prun.out" 14 4 2 60
for n in 1 2 3; do
    is "$(sq "$DB" "SELECT count(*) FROM sbtest$n")" $SIZE "sbtest$n: row count unchanged after run"
done

pg pclean "${common[@]}" oltp_read_write cleanup
is "$RC" 0 "cleanup --tables=3: exit 0"
is "$(grep -c "^Dropping table 'sbtest[123]'...$" "$TMP/pclean.out")" 3 "cleanup --tables=3: three Dropping lines"
is "$(sq "$DB" "SELECT count(*) FROM sqlite_master")" 0 "cleanup --tables=3: nothing left in the schema"

done_testing
