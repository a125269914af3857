#!/usr/bin/env bash
# The fault walk (PGOLAB_FAULT_AT=N:KIND, src/db/driver.h): every driver call that prepare,
# run, cleanup and a short compare make on SQLite is made to fail once, in turn, with each
# kind (retry, reconnect, fatal). For every N: no signal exit, no hang (each command capped),
# a clear one-line error or a correct retry (the run completes its events and counts exactly
# one ignored error or reconnect), the right exit code, and for compare a results database
# that `pgolab report` reads back (a failed experiment leaves no half-recorded run).
# Covered: prepare (2 tables), run at 1 and 2 threads (5 events of oltp_read_write) and
# cleanup over every call; on PostgreSQL (a real server) prepare and run at 1 thread over every
# call; compare over every call of its prepare child and the first 4 calls
# of each run child (every run child makes the same calls, so later N repeat the pattern).
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
DB=$TMP/walk.db
C=(--db-driver=sqlite --sqlite-db="$DB" --tables=2 --table-size=100)
RUN=(--events=5 --time=0)
kinds="retry reconnect fatal"
declare -A word=([retry]=retryable [reconnect]="lost connection" [fatal]=fatal)

# b NAME ARGS...: `pgolab bench ARGS` capped at 20 s; stdout NAME.out, stderr NAME.err, $RC.
b() {
    local name=$1
    shift
    timeout 20 "$PGOLAB" bench "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
# calls ARGS...: the number of driver calls a clean `pgolab bench ARGS` makes.
calls() {
    PGOLAB_FAULT_AT=count timeout 20 "$PGOLAB" bench "$@" >/dev/null 2>"$TMP/count.err"
    sed -n 's/^pgolab: \([0-9]*\) driver calls (PGOLAB_FAULT_AT=count)$/\1/p' "$TMP/count.err"
}
# bad LIST LABEL N: record N in the named list of failures.
declare -A bad
flag() { bad[$1]="${bad[$1]:-}${bad[$1]:+ }$2"; }
# check_bad LABEL DESC: one TAP line: no N failed LABEL.
check_bad() { is "${bad[$1]:-}" "" "$2" || diag "failed for KIND:N = ${bad[$1]}"; }
# one_line KIND N ERE FILE: FILE is exactly one line (one newline, at its end), matching ERE,
# naming the injected fault. Read by bash itself: the walk checks 1,000 files.
one_line() {
    local all nl
    IFS= read -r -d '' all <"$4"
    nl=${all//[!$'\n']/}
    [ "${#nl}" -eq 1 ] && [[ $all == *$'\n' ]] && [[ ${all%$'\n'} =~ $3 ]] &&
        [[ $all == *"injected ${word[$1]} fault at driver call $2 (PGOLAB_FAULT_AT)"* ]]
}

start=$(date +%s)

# ---- the knob itself
PGOLAB_FAULT_AT=3:sometimes timeout 20 "$PGOLAB" bench oltp_read_write "${C[@]}" prepare >/dev/null 2>"$TMP/k.err"
is "$?" 1 "a malformed PGOLAB_FAULT_AT: exit 1"
is "$(tail -1 "$TMP/k.err")" "FATAL: PGOLAB_FAULT_AT=3:sometimes: expected N:retry, N:reconnect, N:fatal (N >= 1) or count" \
    "... one line saying what is expected"
is "$(head -1 "$TMP/k.err")" "WARNING: test knob PGOLAB_FAULT_AT=3:sometimes is set (one injected driver-call failure (the fault walk); for tests only, recorded as test_knobs)" \
    "the knob is announced like every test knob"
rm -f "$DB"*
export PGOLAB_TEST_KNOBS_ANNOUNCED=1  # the announcement is checked once, above

# ---- prepare: every call, every kind
P=$(calls oltp_read_write "${C[@]}" prepare)
is "$P" 6 "a clean prepare of 2 tables makes 6 driver calls (create, insert, index per table)"
b cl oltp_read_write "${C[@]}" cleanup
for k in $kinds; do
    for n in $(seq 1 "$P"); do
        PGOLAB_FAULT_AT=$n:$k b p oltp_read_write "${C[@]}" prepare
        [ $RC -lt 124 ] || flag "prep-sig" "$k:$n=$RC"
        [ $RC -eq 1 ] || flag "prep-rc" "$k:$n=$RC"
        one_line "$k" "$n" '^FATAL: (CREATE|INSERT).* failed: ' "$TMP/p.err" || flag "prep-msg" "$k:$n"
        # what was created stays removable: cleanup then a clean prepare work
        b pc oltp_read_write "${C[@]}" cleanup
        [ $RC -eq 0 ] || flag "prep-cleanup" "$k:$n=$RC"
    done
done
check_bad prep-sig "prepare, N=1..$P x 3 kinds: no signal exit, no timeout"
check_bad prep-rc "prepare: exit 1 for every injected fault"
check_bad prep-msg "prepare: one FATAL line naming the statement and the injected fault"
check_bad prep-cleanup "prepare: cleanup afterwards succeeds every time"
PGOLAB_FAULT_AT=$((P + 1)):fatal b p oltp_read_write "${C[@]}" prepare
is "$RC" 0 "prepare with the fault one call past the sequence: exit 0 (the walk covered every call)"

# walk_run LABEL THREADS N ARGS...: `bench oltp_read_write ARGS --threads=THREADS run` (5
# events) with each of calls 1..N failing in turn, each kind; flags failures under LABEL-*.
walk_run() {
    local label=$1 threads=$2 last=$3
    shift 3
    for k in $kinds; do
        for n in $(seq 1 "$last"); do
            PGOLAB_FAULT_AT=$n:$k b r oltp_read_write "$@" --threads=$threads run "${RUN[@]}"
            [ $RC -lt 124 ] || flag "$label-sig" "$k:$n=$RC"
            final_vars "$TMP/r.out"
            if [ "$k" = fatal ]; then
                [ $RC -eq 1 ] || flag "$label-rc" "$k:$n=$RC"
                one_line "$k" "$n" '^FATAL: SQL error \(thread #[01]\): ' "$TMP/r.err" || flag "$label-msg" "$k:$n"
                grep -q '^FAILED: the run was stopped by the error above' "$TMP/r.out" || flag "$label-head" "$k:$n"
                # 1 thread: the events before the failing call completed, no more
                [ "$threads" = 2 ] || [ "${F_transactions:-x}" = $(((n - 1) / 20)) ] || flag "$label-partial" "$k:$n=${F_transactions:-}"
            else
                [ $RC -eq 0 ] || flag "$label-rc" "$k:$n=$RC"
                [ -s "$TMP/r.err" ] && flag "$label-msg" "$k:$n"
                [ "${F_transactions:-}" = 5 ] || flag "$label-events" "$k:$n=${F_transactions:-}"
                if [ "$k" = retry ]; then got="${F_ignored_errors:-}/${F_reconnects:-}"; else got="${F_reconnects:-}/${F_ignored_errors:-}"; fi
                [ "$got" = 1/0 ] || flag "$label-counted" "$k:$n=$got"
            fi
        done
    done
    check_bad "$label-sig" "$label run --threads=$threads, N=1..$last x 3 kinds: no signal exit, no timeout"
    check_bad "$label-rc" "$label run --threads=$threads: exit 0 after a retry or reconnect, 1 after a fatal error"
    check_bad "$label-msg" "$label run --threads=$threads: a fatal fault is one FATAL line; a retried one prints nothing"
    check_bad "$label-head" "$label run --threads=$threads: the partial summary of a failed run says FAILED"
    check_bad "$label-events" "$label run --threads=$threads: a retried or reconnected event is re-run: all 5 events complete"
    check_bad "$label-counted" "$label run --threads=$threads: exactly one ignored error (retry) or reconnect (reconnect) counted"
    [ "$threads" = 2 ] ||
        check_bad "$label-partial" "$label run --threads=1, fatal at call N: the summary counts the (N-1)/20 events completed before it"
}

# ---- run: every call, every kind, 1 thread then 2
R=$(calls oltp_read_write "${C[@]}" --threads=1 run "${RUN[@]}")
is "$R" 100 "a clean run of 5 oltp_read_write events makes 100 driver calls (20 per event)"
walk_run sqlite 1 "$R" "${C[@]}"
walk_run sqlite2 2 "$R" "${C[@]}"
PGOLAB_FAULT_AT=$((R + 1)):fatal b r oltp_read_write "${C[@]}" --threads=1 run "${RUN[@]}"
is "$RC" 0 "run with the fault one call past the sequence: exit 0"

# ---- cleanup: every call, every kind
K=$(calls oltp_read_write "${C[@]}" cleanup)
is "$K" 2 "a clean cleanup of 2 tables makes 2 driver calls"
for k in $kinds; do
    for n in $(seq 1 "$K"); do
        b p oltp_read_write "${C[@]}" prepare
        PGOLAB_FAULT_AT=$n:$k b c oltp_read_write "${C[@]}" cleanup
        [ $RC -lt 124 ] || flag "clean-sig" "$k:$n=$RC"
        [ $RC -eq 1 ] || flag "clean-rc" "$k:$n=$RC"
        one_line "$k" "$n" '^FATAL: DROP TABLE IF EXISTS sbtest[12] failed: ' "$TMP/c.err" || flag "clean-msg" "$k:$n"
        b c2 oltp_read_write "${C[@]}" cleanup
        [ $RC -eq 0 ] || flag "clean-again" "$k:$n=$RC"
    done
done
check_bad clean-sig "cleanup, N=1..$K x 3 kinds: no signal exit, no timeout"
check_bad clean-rc "cleanup: exit 1 for every injected fault"
check_bad clean-msg "cleanup: one FATAL line naming the DROP and the injected fault"
check_bad clean-again "cleanup: running it again finishes the job"

# ---- compare: every call of the prepare child, the first calls of the run children
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
V=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
CMP=(--bench=oltp_point_select --threads=1 --rounds=1 --time=1 --tables=2 --table-size=100 --rand-seed=7)
CP=$(calls oltp_point_select --db-driver=sqlite --sqlite-db="$TMP/cp.db" --tables=2 --table-size=100 prepare)
is "$CP" 6 "compare's prepare child makes 6 driver calls (as bench prepare)"
for k in $kinds; do
    for n in $(seq 1 $((CP + 4))); do
        rdb=$TMP/cmp-$k-$n.db
        PGOLAB_FAULT_AT=$n:$k timeout 60 "$PGOLAB" compare "${V[@]}" "${CMP[@]}" --results="$rdb" \
            >"$TMP/m.out" 2>"$TMP/m.err"
        RC=$?
        [ $RC -lt 124 ] || flag "cmp-sig" "$k:$n=$RC"
        timeout 20 "$PGOLAB" report --results="$rdb" >"$TMP/mr.out" 2>"$TMP/mr.err"
        rrc=$?
        runs=$(sq "$rdb" "SELECT count(*) FROM runs")
        ic=$(sq "$rdb" "PRAGMA integrity_check")
        [ "$ic" = ok ] || flag "cmp-integrity" "$k:$n=$ic"
        if [ "$n" -le "$CP" ] || [ "$k" = fatal ]; then
            [ $RC -eq 1 ] || flag "cmp-rc" "$k:$n=$RC"
            if [ "$n" -le "$CP" ]; then
                re="^FATAL: prepare of oltp_point_select with A failed \(exit 1\): .*injected ${word[$k]} fault at driver call $n \(PGOLAB_FAULT_AT\)$"
            else
                re="^FATAL: run failed: variant [AB], oltp_point_select, threads=1, round 1/1: exit 1: FATAL: SQL error \(thread #0\): injected fatal fault at driver call $n \(PGOLAB_FAULT_AT\); (table sbtest[0-9]+, )?statement: [A-Z].*$"
            fi
            grep -qE "$re" "$TMP/m.err" || flag "cmp-msg" "$k:$n"
            grep -qx "experiment 1 removed from $rdb: it failed before its first run" "$TMP/m.err" || flag "cmp-removed" "$k:$n"
            [ "$runs/$rrc" = 0/1 ] && grep -qx "FATAL: no experiments in $rdb yet" "$TMP/mr.err" ||
                flag "cmp-report" "$k:$n=$runs/$rrc"
        else
            [ $RC -eq 0 ] || flag "cmp-rc" "$k:$n=$RC"
            # each run child hit its Nth call once: retry counts an error, reconnect does not
            want=1
            [ "$k" = retry ] || want=0
            [ "$runs/$rrc" = 2/0 ] || flag "cmp-report" "$k:$n=$runs/$rrc"
            [ "$(sq "$rdb" "SELECT group_concat(errors) FROM runs")" = "$want,$want" ] || flag "cmp-counted" "$k:$n"
            grep -q "^pgolab experiment 1 (compare):" "$TMP/mr.out" || flag "cmp-report" "$k:$n=header"
        fi
    done
done
check_bad cmp-sig "compare, N=1..$((CP + 4)) x 3 kinds: no signal exit, no timeout"
check_bad cmp-rc "compare: exit 1 when prepare or a run fails, 0 when the runs retried or reconnected"
check_bad cmp-msg "compare: the error names the prepare or the run (variant, workload, threads, round) and the child's FATAL line"
check_bad cmp-removed "compare: an experiment that failed before its first run is removed, and says so"
check_bad cmp-integrity "compare: the results database passes PRAGMA integrity_check every time"
check_bad cmp-report "compare: pgolab report reads the results back (both runs, or no experiment at all)"
check_bad cmp-counted "compare: each recorded run counts the retried error it survived"

# ---- PostgreSQL (a server started with `pgolab server start`): prepare and run, every call
# of a run at 1 thread (the server's ROLLBACK after a retried event, a real round trip)
SD=$(mktemp -d /dev/shm/pgolab-walk.XXXXXX) || bail_out "mktemp in /dev/shm failed"
chmod 0711 "$SD"   # PostgreSQL runs as the postgres user
walk_cleanup() {
    timeout 60 "$PGOLAB" server stop --datadir="$SD/pg" >/dev/null 2>&1
    rm -rf "$SD"
    _e2e_cleanup
}
on_exit walk_cleanup
timeout 120 "$PGOLAB" server start --db-driver=pgsql --datadir="$SD/pg" >"$TMP/start.out" 2>&1 ||
    bail_out "pgolab server start failed: $(tail -3 "$TMP/start.out")"
PORT=$(sed -n 's/^port: *127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/start.out")
PG=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT" --pgsql-user=sbtest --pgsql-db=sbtest
    --tables=2 --table-size=100)
PP=$(calls oltp_read_write "${PG[@]}" prepare)
is "$PP" 6 "PostgreSQL: a clean prepare of 2 tables makes 6 driver calls"
for k in $kinds; do
    for n in $(seq 1 "$PP"); do
        PGOLAB_FAULT_AT=$n:$k b p oltp_read_write "${PG[@]}" prepare
        [ $RC -eq 1 ] || flag "pgprep" "$k:$n=$RC"
        one_line "$k" "$n" '^FATAL: (CREATE|INSERT).* failed: ' "$TMP/p.err" || flag "pgprep" "$k:$n=msg"
        b pc oltp_read_write "${PG[@]}" cleanup
        [ $RC -eq 0 ] || flag "pgprep" "$k:$n=cleanup $RC"
    done
done
check_bad pgprep "PostgreSQL prepare, N=1..$PP x 3 kinds: exit 1, one FATAL line, cleanup works afterwards"
b p oltp_read_write "${PG[@]}" prepare
PR=$(calls oltp_read_write "${PG[@]}" --threads=1 run "${RUN[@]}")
is "$PR" 100 "PostgreSQL: a clean run of 5 events makes 100 driver calls"
walk_run pgsql 1 "$PR" "${PG[@]}"

note "fault walk: $(($(date +%s) - start)) s"
done_testing
