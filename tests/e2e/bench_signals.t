#!/bin/bash
# bench_signals.t: SIGINT during `run --time=30` stops the run within seconds, still prints the
# whole final block (text, and a valid JSON document with "interrupted": true) and exits 2.
# Retryable errors (injected with PGOLAB_FAULT_RETRY_EVERY=N) restart the event as sysbench does:
# --events=N still completes exactly N transactions, the errors are counted as "ignored errors"
# with a consistent err/s, and every failed attempt's BEGIN shows up in "other".
. "$(dirname "$0")/lib.sh"

DB=$TMP/sb.db
common=(--sqlite-db="$DB" --table-size=500)

pg prep "${common[@]}" oltp_read_write prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep.err")"

# interrupt NAME ARGS...: start `pgolab bench ARGS` in the background, SIGINT it once the run
# has started and 1.5 s passed (with --report-interval=1: once the first interval line is out),
# wait for it; sets RC and ELAPSED (seconds from the signal to the exit).
interrupt() {
    local name=$1 pid t0 t1
    shift
    "$PGOLAB" bench "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    pid=$!
    watchdog 40 "$pid"
    poll 300 0.05 catches "$pid" 2
    sleep 1.5
    case " $* " in
    *" --report-interval=1 "*) poll 300 0.1 grep -q '^\[ 1s \]' "$TMP/$name.out" ;;
    esac
    t0=$(date +%s.%N)
    kill -INT "$pid"
    wait "$pid"
    RC=$?
    t1=$(date +%s.%N)
    end_watchdog
    ELAPSED=$(calc "$t1 - $t0")
}

note "---- SIGINT, text output"
interrupt int "${common[@]}" --time=30 --report-interval=1 oltp_read_write run
is "$RC" 2 "SIGINT: exit status 2"
cmp_ok "$ELAPSED" '<' 5 "SIGINT: exits within 5 s of the signal (${ELAPSED}s)"
f=$TMP/int.out
for l in "SQL statistics:" "    queries performed:" "General statistics:" "Latency (ms):" "Threads fairness:"; do
    ok "SIGINT: final block has '$l'" grep -qxF "$l" "$f"
done
sql=$(grep -nxF "SQL statistics:" "$f" | cut -d: -f1)
fair=$(grep -nxF "Threads fairness:" "$f" | cut -d: -f1)
ok "SIGINT: 'Threads fairness' after 'SQL statistics'" test "${sql:-0}" -gt 0 -a "${fair:-0}" -gt "${sql:-0}"
final_vars "$f"
like "$(sed -n "$((${fair:-0} + 1)),\$p" "$f")" '^    events \(avg/stddev\): +[0-9.]+/[0-9.]+$' "SIGINT: fairness events line"
like "$(sed -n "$((${fair:-0} + 1)),\$p" "$f")" '^    execution time \(avg/stddev\): +[0-9.]+/[0-9.]+$' "SIGINT: fairness execution time line"
cmp_ok "$F_transactions" '>' 0 "SIGINT: transactions > 0"
is "$F_total" "$(calc "$F_read + $F_write + $F_other")" "SIGINT: total = read + write + other"
is "$F_read/$F_write/$F_other" "$(calc "$F_transactions * 14")/$(calc "$F_transactions * 4")/$(calc "$F_transactions * 2")" \
    "SIGINT: only whole transactions counted (r/w/o = transactions x 14/4/2)"
cmp_ok "$F_total_time" '>=' 1 "SIGINT: total time covers the 1.5 s before the signal ($F_total_time)"
cmp_ok "$F_total_time" '<' 15 "SIGINT: total time stops at the signal, not at --time=30"
near "$F_transactions_ps" "$(calc "$F_transactions / $F_total_time")" "$(calc "$F_transactions_ps * 0.01 + 0.01")" \
    "SIGINT: per-sec figures use the interrupted run's time"
is "$F_fair_events_avg" "$(printf '%.4f' "$F_transactions")" "SIGINT: fairness events = transactions"
cmp_ok "$(grep -c '^\[ [0-9]*s \] thds: ' "$f")" '>=' 1 "SIGINT: the interval line before the signal was printed"

note "---- SIGINT, JSON output"
interrupt intj "${common[@]}" --time=30 --format=json oltp_read_write run
is "$RC" 2 "SIGINT --format=json: exit status 2"
cmp_ok "$ELAPSED" '<' 5 "SIGINT --format=json: exits within 5 s of the signal"
is "$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
        print $j->{interrupted} ? "true" : "false", " ", $j->{transactions} > 0 ? "some" : "none"' <"$TMP/intj.out" 2>&1)" \
    "true some" "SIGINT --format=json: valid JSON, interrupted: true, transactions > 0"

note "---- SIGINT before any event would finish is still a clean exit"
# A signal as soon as the run has its handler (the workers connecting or just connected).
"$PGOLAB" bench "${common[@]}" --time=30 oltp_point_select run >"$TMP/early.out" 2>"$TMP/early.err" &
pid=$!
poll 300 0.01 catches "$pid" 2
kill -INT "$pid"
watchdog 15 "$pid"
wait "$pid"
RC=$?
end_watchdog
is "$RC" 2 "early SIGINT: exit status 2"
ok "early SIGINT: final block printed" grep -qxF "Threads fairness:" "$TMP/early.out"

note "---- a watchdog killed right after it started leaves the test's files alone"
# The watchdogs above are killed as soon as the command they guard exits; a killed subshell
# must not run this file's EXIT cleanup (lib.sh's on_exit). Without that guard bash 5.2 removed
# $TMP within the first few of these kills.
# (A subshell that takes the TERM before it has reset the traps it inherited runs them only
# when its sleep ends: a short sleep keeps those cases from costing 15 s each.)
for _ in $(seq 1 50); do
    ( sleep 1 ) >/dev/null 2>&1 &
    kill $! 2>/dev/null
    wait $! 2>/dev/null
done
ok "killed watchdogs: \$TMP is still there" test -f "$TMP/early.out"
is "$(grep -l '^[^#]*trap .* EXIT' "$REPO_DIR"/tests/e2e/*.t | tr '\n' ' ')" "" \
    "every e2e file sets its exit cleanup through on_exit"

# fault RUN_NAME N ARGS...: run with PGOLAB_FAULT_RETRY_EVERY=N (capped at 10 s: a livelock fails).
fault() {
    local name=$1 n=$2
    shift 2
    PGOLAB_FAULT_RETRY_EVERY=$n E2E_CMD_TIMEOUT=10 pg "$name" "$@"
}

# check_faults LABEL FILE EVENTS READS_PER_TRX: the counters of a run with injected retries.
check_faults() {
    local label=$1 file=$2 events=$3 r=$4
    final_vars "$file"
    is "$F_transactions" "$events" "$label: transactions == --events ($events) exactly"
    cmp_ok "$F_ignored_errors" '>' 0 "$label: ignored errors > 0 ($F_ignored_errors)"
    # Tolerance: 1%, plus the rounding of the printed total time (4 decimals: up to
    # 0.00005 s, which matters for runs of a few ms), plus err/s's own 2 decimals.
    near "$F_ignored_errors_ps" "$(calc "$F_ignored_errors / $F_total_time")" \
        "$(calc "$F_ignored_errors_ps * (0.01 + 0.00005 / $F_total_time) + 0.01")" \
        "$label: err/s = ignored errors / total time"
    # Each failed attempt ran BEGIN (other), then the event restarted: other = 2/trx + 1/error.
    is "$F_other" "$(calc "$events * 2 + $F_ignored_errors")" "$label: other = 2 x transactions + one BEGIN per retry"
    cmp_ok "$F_read" '>=' "$(calc "$events * $r")" "$label: reads include the failed attempts' reads"
    is "$F_total" "$(calc "$F_read + $F_write + $F_other")" "$label: total = read + write + other"
    is "$F_total_events" "$events" "$label: total number of events == --events"
}

note "---- fault injection: PGOLAB_FAULT_RETRY_EVERY=7 (fewer than one event's 14 statements)"
fault f7 7 "${common[@]}" --events=200 oltp_read_only run
is "$RC" 0 "EVERY=7: exit 0 (no livelock)"
check_faults "EVERY=7" "$TMP/f7.out" 200 14
# A test knob never acts silently: said once on stderr, recorded in the run's JSON.
is "$(<"$TMP/f7.err")" "WARNING: test knob PGOLAB_FAULT_RETRY_EVERY=7 is set (injected retryable errors; for tests only, recorded as test_knobs)" \
    "EVERY=7: the knob is announced on stderr, once"
fault fj 7 "${common[@]}" --events=50 --format=json oltp_read_only run
knob_in() { perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print exists $j->{test_knobs} ? "$j->{test_knobs}{PGOLAB_FAULT_RETRY_EVERY}" : "none"' <"$1"; }
is "$(knob_in "$TMP/fj.out")" 7 "EVERY=7: the run's JSON records test_knobs.PGOLAB_FAULT_RETRY_EVERY"
pg nj "${common[@]}" --events=10 --format=json oltp_read_only run
is "$(knob_in "$TMP/nj.out")" none "no knob set: no test_knobs in the JSON"
is "$(<"$TMP/nj.err")" "" "no knob set: nothing on stderr"

note "---- fault injection: PGOLAB_FAULT_RETRY_EVERY=17, with interval reports"
fault f17 17 "${common[@]}" --events=200 --report-interval=1 oltp_read_only run
is "$RC" 0 "EVERY=17: exit 0"
check_faults "EVERY=17" "$TMP/f17.out" 200 14
cmp_ok "$F_read" '>' 2800 "EVERY=17: some failed attempts had done reads before the fault"

note "---- fault injection on writes: PGOLAB_FAULT_RETRY_EVERY=8 on oltp_write_only"
# 4 statements per event: after each fault, 7 calls succeed (one event, then UPDATE, UPDATE,
# DELETE of the next), so every retried attempt fails on the INSERT right after its DELETE.
fault fw 8 "${common[@]}" --events=100 oltp_write_only run
is "$RC" 0 "write_only EVERY=8: exit 0"
check_faults "write_only EVERY=8" "$TMP/fw.out" 100 0
cmp_ok "$F_write" '>' 400 "write_only EVERY=8: writes include the failed attempts' writes"
is "$(sqlite3 -batch "$DB" 'SELECT count(*) FROM sbtest1')" 500 \
    "write_only EVERY=8: rolled-back DELETEs (insert failed) leave the row count unchanged"

note "---- an event retried every time ends at --time (another process holds the write lock)"
# With --sqlite-busy-timeout=0 every write fails with SQLITE_BUSY at once and the event is
# retried without end; only --time stops it (with one worker there is no reporter thread: the
# retry loop itself checks the deadline).
LOCKDB=$TMP/lock.db
cp "$DB" "$LOCKDB"
( echo 'BEGIN IMMEDIATE;'; sleep 12; echo 'COMMIT;' ) | sqlite3 "$LOCKDB" &
locker=$!
for _ in $(seq 100); do
    sqlite3 -cmd '.timeout 0' "$LOCKDB" 'BEGIN IMMEDIATE; COMMIT;' >/dev/null 2>&1 || break
    sleep 0.1
done
t0=$(date +%s.%N)
E2E_CMD_TIMEOUT=10 pg locked --sqlite-db="$LOCKDB" --table-size=500 --sqlite-busy-timeout=0 \
    --time=2 oltp_update_index run
ELAPSED=$(calc "$(date +%s.%N) - $t0")
kill "$locker" 2>/dev/null
wait "$locker" 2>/dev/null
is "$RC" 0 "write lock held elsewhere: exit 0 at --time"
cmp_ok "$ELAPSED" '<' 6 "write lock held elsewhere: ends at --time=2 (${ELAPSED}s)"
final_vars "$TMP/locked.out"
is "$F_transactions" 0 "write lock held elsewhere: no transaction completed"
cmp_ok "$F_ignored_errors" '>' 0 "write lock held elsewhere: the retries are ignored errors ($F_ignored_errors)"

note "---- SIGINT during prepare: stops between bulk inserts, exit 2, says what is partial"
BIG=$TMP/big.db
"$PGOLAB" bench --sqlite-db="$BIG" --table-size=5000000 oltp_read_write prepare \
    >"$TMP/bigprep.out" 2>"$TMP/bigprep.err" &
pid=$!
for _ in $(seq 1 100); do grep -q '^Inserting' "$TMP/bigprep.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -INT $pid
t0=$(date +%s.%N)
wait $pid
RC=$?
ELAPSED=$(calc "$(date +%s.%N) - $t0")
is "$RC" 2 "prepare + SIGINT: exit 2"
cmp_ok "$ELAPSED" '<' 10 "prepare + SIGINT: stops soon after the signal (${ELAPSED}s)"
like "$(<"$TMP/bigprep.err")" "prepare interrupted while filling 'sbtest1' \([0-9]+ of 5000000 rows\): run cleanup" \
    "prepare + SIGINT: the message says which table is partial and what to do"
is "$(grep -c 'secondary index' "$TMP/bigprep.out")" 0 "prepare + SIGINT: no index step after the signal"

done_testing
