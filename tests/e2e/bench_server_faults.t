#!/bin/bash
# bench_server_faults.t: sysbench's runner guarantees against real PostgreSQL and MariaDB
# servers started with `pgolab server start` on loopback. --forced-shutdown: a server frozen with SIGSTOP
# mid-run (workers blocked in reads) still ends the run at --time plus the grace, with the
# work done, the events cut off and exit 2. --thread-init-timeout: workers that cannot connect
# to a silent server end the start after the timeout (exit 2), and so does the table check's
# connection before them (a silent or frozen server from the start); a refusal (too many
# connections) ends it at once. One failure, one line: an error every worker hits (a refused
# connection, a table dropped mid-run) is one FATAL line with the native code and the fix,
# and a run stopped by it prints its partial summary under a FAILED heading. An SQL error
# names the table and the statement with its values (a duplicate key on MariaDB).
. "$(dirname "$0")/lib.sh"

have psql || bail_out "needs psql (scripts/install-deps.sh installs postgresql)"
have python3 || bail_out "needs python3 (the silent server)"
have mariadbd || bail_out "needs mariadbd (scripts/install-deps.sh installs mariadb-server)"
have ss || bail_out "needs ss (scripts/install-deps.sh installs iproute2)"
E2E_CMD_TIMEOUT=40

SD=$(mktemp -d /dev/shm/pgolab-faults.XXXXXX) || bail_out "mktemp in /dev/shm failed"
chmod 0711 "$SD"   # PostgreSQL runs as the postgres user
PG_PIDS=()         # processes frozen by a test: thawed whatever happens
faults_cleanup() {
    [ ${#PG_PIDS[@]} -gt 0 ] && kill -CONT "${PG_PIDS[@]}" 2>/dev/null
    local d
    for d in pg small my; do
        [ -e "$SD/$d" ] && timeout 60 "$PGOLAB" server stop --datadir="$SD/$d" >/dev/null 2>&1
    done
    rm -rf "$SD"
    _e2e_cleanup
}
on_exit faults_cleanup

# start NAME [server options...]: a server in $SD/NAME; sets PORT_<NAME>
start() {
    local name=$1
    shift
    local drv=pgsql
    [ "$name" = my ] && drv=mysql
    timeout 120 "$PGOLAB" server start --db-driver=$drv --datadir="$SD/$name" "$@" >"$TMP/start-$name.out" 2>&1 ||
        bail_out "pgolab server start failed: $(tail -3 "$TMP/start-$name.out")"
    eval "PORT_$name=$(sed -n 's/^port: *127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/start-$name.out")"
}
start pg
start small --server-option=max_connections=6   # 3 connections for sbtest (3 reserved)
start my --server-option=max_connections=10     # MariaDB's smallest
MY=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT_my" --mysql-user=sbtest --mysql-db=sbtest)
MY_PID=$(sed -n 's/^server: .*(pid \([0-9]*\))$/\1/p' "$TMP/start-my.out")
[ -n "$MY_PID" ] || bail_out "no MariaDB pid in: $(<"$TMP/start-my.out")"
PG=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT_pg" --pgsql-user=sbtest --pgsql-db=sbtest)
SMALL=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT_small" --pgsql-user=sbtest --pgsql-db=sbtest)
pg prep "${PG[@]}" --table-size=1000 oltp_read_write prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep.err")"
pg prep2 "${SMALL[@]}" --table-size=100 oltp_point_select prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep2.err")"
pg prep3 "${MY[@]}" --table-size=100 oltp_point_select prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep3.err")"

# server_pids: the postmaster and its backends (the postmaster alone stopped does not stop
# queries in flight)
server_pids() {
    local pm
    pm=$(head -n 1 "$SD/pg/postmaster.pid")
    echo "$pm" $(pgrep -P "$pm")
}

# timed NAME ARGS...: pg NAME ARGS... and ELAPSED (s)
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    pg "$@"
    t1=$(date +%s.%N)
    ELAPSED=$(calc "$t1 - $t0")
}
# when_running PORT N COMMAND...: once N clients hold connections to the server on PORT (the
# run's workers are up), half a second later, run COMMAND (a fixed delay from the start would
# hit a start that a loaded machine has not finished; the runs it cuts last 6 s, so a slow
# loop here still lands inside them)
when_running() {
    local port=$1 n=$2
    shift 2
    for _ in $(seq 1 300); do
        [ "$(ss -Htn state established "( sport = :$port )" | wc -l)" -ge "$n" ] && break
        sleep 0.1
    done
    sleep 0.5
    "$@"
}
# freeze PIDS-COMMAND: stop the processes it prints (evaluated now: PostgreSQL's backends)
freeze() { kill -STOP $("$1"); }
my_pid() { echo "$MY_PID"; }

note "---- --forced-shutdown: the server freezes mid-run"
for fmt in text json; do
    when_running "$PORT_pg" 4 freeze server_pids &
    freezer=$!
    timed "fs-$fmt" "${PG[@]}" --table-size=1000 --threads=4 --time=6 --forced-shutdown=1 \
        --report-interval=1 --format="$fmt" oltp_read_write run
    wait "$freezer"
    PG_PIDS=($(server_pids))
    kill -CONT "${PG_PIDS[@]}"
    PG_PIDS=()
    is "$RC" 2 "forced shutdown ($fmt): exit 2"
    cmp_ok "$ELAPSED" '<' 20 "forced shutdown ($fmt): the process ended (--time=6 plus 1 s grace; ${ELAPSED}s)"
    is "$(grep -c 'The --max-time limit has expired, forcing shutdown...' "$TMP/fs-$fmt.err")" 1 \
        "forced shutdown ($fmt): sysbench's message, once"
done
f=$TMP/fs-text.out
ok "forced shutdown: the header states the limit" grep -qxF "Forcing shutdown in 7 seconds" "$f"
ok "forced shutdown: a heading says so" grep -q '^FORCED SHUTDOWN: ' "$f"
final_vars "$f"
cmp_ok "$F_transactions" '>' 0 "forced shutdown: the work done before the freeze is kept ($F_transactions)"
is "$F_total" "$(calc "$F_read + $F_write + $F_other")" "forced shutdown: the summary is consistent"
cmp_ok "$F_total_time" '<' 9 "forced shutdown: total time ends at the shutdown ($F_total_time)"
u=$(sed -n 's/^Number of unfinished transactions on forced shutdown: \([0-9]*\)$/\1/p' "$f")
cmp_ok "${u:-x}" '>=' 1 "forced shutdown: the events cut off are counted ($u)"
cmp_ok "${u:-x}" '<=' 4 "forced shutdown: at most one per thread ($u)"
s=$(grep -nxF 'SQL statistics:' "$f" | cut -d: -f1)
is "$(sed -n "${s:-1},\$p" "$f" | grep -c '^\[ ')" 0 "forced shutdown: no interval line after the final block"
is "$(grep -A2 '^    reconnects:' "$f" | tail -n 2 | sed 's/[0-9][0-9]*$/N/')" \
    "
Number of unfinished transactions on forced shutdown: N" "forced shutdown: the unfinished count where sysbench 1.0.20 prints it (after the SQL statistics)"
is "$(grep -B2 -A2 '^Forcing shutdown in' "$f" | tr '\n' '|')" \
    "Initializing random number generator from current time||Forcing shutdown in 7 seconds||Initializing worker threads...|" \
    "forced shutdown: the header line where sysbench 1.0.20 prints it"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["forced_shutdown"], d["unfinished_events"] >= 1, d["events"] > 0)' "$TMP/fs-json.out")" \
    "True True True" "forced shutdown (json): forced_shutdown, unfinished_events, the events done"
pg after "${PG[@]}" --table-size=1000 --threads=2 --time=1 oltp_read_only run
is "$RC" 0 "the thawed server still serves a run"

note "---- --forced-shutdown on MariaDB"
when_running "$PORT_my" 2 freeze my_pid &
freezer=$!
PG_PIDS=("$MY_PID")
timed fs-my "${MY[@]}" --table-size=100 --threads=2 --time=6 --forced-shutdown=1 oltp_point_select run
wait "$freezer"
kill -CONT "$MY_PID"
PG_PIDS=()
is "$RC" 2 "MariaDB frozen: exit 2"
cmp_ok "$ELAPSED" '<' 20 "MariaDB frozen: the process ended (--time=6 plus 1 s grace; ${ELAPSED}s)"
final_vars "$TMP/fs-my.out"
cmp_ok "$F_transactions" '>' 0 "MariaDB frozen: the work done is kept ($F_transactions)"
ok "MariaDB frozen: the events cut off are counted" grep -qE '^Number of unfinished transactions on forced shutdown: [12]$' "$TMP/fs-my.out"

note "---- --thread-init-timeout: a silent server"
# the first connection (pgolab's table check) goes to the real server (none when the target
# port is 0); later ones are accepted and never answered
cat >"$TMP/silent.py" <<'PY'
import socket, sys, threading, time
target, life = int(sys.argv[1]), float(sys.argv[2])
ls = socket.socket(); ls.bind(('127.0.0.1', 0)); ls.listen(64)
print(ls.getsockname()[1], flush=True)
held = []
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
def serve():
    first = True
    while True:
        c, _ = ls.accept()
        if first and target:
            first = False
            u = socket.create_connection(('127.0.0.1', target))
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()
        else:
            held.append(c)
threading.Thread(target=serve, daemon=True).start()
time.sleep(life)
PY
python3 "$TMP/silent.py" "$PORT_pg" 30 >"$TMP/silent.port" &
silent=$!
poll 50 0.1 test -s "$TMP/silent.port"
SPORT=$(<"$TMP/silent.port")
timed init --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$SPORT" --pgsql-user=sbtest \
    --pgsql-db=sbtest --table-size=1000 --threads=4 --thread-init-timeout=2 oltp_read_write run
kill "$silent" 2>/dev/null
wait "$silent" 2>/dev/null
is "$RC" 2 "silent server: exit 2 (sysbench's for a thread-init timeout)"
cmp_ok "$ELAPSED" '>=' 2 "silent server: waited the --thread-init-timeout (${ELAPSED}s)"
cmp_ok "$ELAPSED" '<' 9 "silent server: ended by the timeout, not the client's 10 s connect timeout (${ELAPSED}s)"
is "$(wc -l <"$TMP/init.err")" 1 "silent server: one line"
like "$(<"$TMP/init.err")" '^FATAL: Worker threads failed to initialize within 2 seconds! \(0 of 4 threads had connected' \
    "silent server: sysbench's message and how many threads had started"
ok "silent server: no report" test "$(grep -c 'SQL statistics' "$TMP/init.out")" -eq 0

note "---- --thread-init-timeout bounds the table check's connection too"
# every connection is held unanswered, the check's first: the timeout ends it, not the client's
# 60 s connect timeout (before, the check ran outside the bound: exit 1 after the connect timeout)
python3 "$TMP/silent.py" 0 80 >"$TMP/silent0.port" &
silent=$!
poll 50 0.1 test -s "$TMP/silent0.port"
SPORT=$(<"$TMP/silent0.port")
timed check-pg --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$SPORT" --pgsql-user=sbtest \
    --pgsql-db=sbtest --pgsql-connect-timeout=60 --table-size=1000 --threads=4 --thread-init-timeout=3 \
    oltp_read_write run
kill "$silent" 2>/dev/null
wait "$silent" 2>/dev/null
is "$RC" 2 "silent server, table check: exit 2"
cmp_ok "$ELAPSED" '<' 11 "silent server, table check: ended by the timeout, not the 60 s connect timeout (${ELAPSED}s)"
is "$(wc -l <"$TMP/check-pg.err")" 1 "silent server, table check: one line"
like "$(<"$TMP/check-pg.err")" '^FATAL: Worker threads failed to initialize within 3 seconds! \(0 of 4 threads had connected and prepared; the server does not answer the first connection \(the table check' \
    "silent server, table check: sysbench's message, the thread counts and what got no answer"
ok "silent server, table check: no report" test "$(grep -c 'SQL statistics' "$TMP/check-pg.out")" -eq 0

# a frozen MariaDB (SIGSTOP) accepts TCP in the kernel and never answers
kill -STOP "$MY_PID"
PG_PIDS=("$MY_PID")
timed check-my "${MY[@]}" --mysql-connect-timeout=60 --table-size=100 --threads=2 \
    --thread-init-timeout=3 --format=json oltp_point_select run
kill -CONT "$MY_PID"
PG_PIDS=()
is "$RC" 2 "MariaDB frozen before the run: exit 2"
cmp_ok "$ELAPSED" '<' 11 "MariaDB frozen before the run: ended by the timeout, not the 60 s connect timeout (${ELAPSED}s)"
like "$(<"$TMP/check-my.err")" '^FATAL: Worker threads failed to initialize within 3 seconds! \(0 of 2 threads had connected and prepared' \
    "MariaDB frozen before the run: sysbench's message with the thread counts"
is "$(wc -c <"$TMP/check-my.out")" 0 "MariaDB frozen before the run (json): nothing on stdout"

note "---- a refusal ends the start at once: too many connections"
timed many "${SMALL[@]}" --table-size=100 --threads=8 --time=2 oltp_point_select run
is "$RC" 1 "too many connections: exit 1"
cmp_ok "$ELAPSED" '<' 10 "too many connections: at once, not after the 30 s --thread-init-timeout (${ELAPSED}s)"
is "$(wc -l <"$TMP/many.err")" 1 "too many connections: one line for every refused thread"
like "$(<"$TMP/many.err")" '^FATAL: cannot connect \([0-9]+ of 8 threads\): .*(too many clients|connection slots are reserved).*--threads=8 needs 8 connections at once \(one per thread\), the server allows 3 \(max_connections=6, 3 reserved for superusers\): raise max_connections or lower --threads \([0-9]+ of 8 threads had started\)$' \
    "too many connections: the server's error, what is needed, the fix and how many had started"
# a backend being refused holds a process slot until it exits, so a thread may be refused below
# the limit (and PostgreSQL words the refusal two ways: "too many clients already", "connection
# slots are reserved"): one line still, counting every refused thread
refused=$(sed -n 's/^FATAL: cannot connect (\([0-9]*\) of 8 threads).*/\1/p' "$TMP/many.err")
started=$(sed -n 's/.*(\([0-9]*\) of 8 threads had started)$/\1/p' "$TMP/many.err")
is "$(( ${refused:-0} + ${started:-0} ))" 8 "too many connections: refused ($refused) and started ($started) are every thread"
cmp_ok "${started:-99}" '<=' 3 "too many connections: no more started than the server allows ($started)"
ok "too many connections: no report" test "$(grep -c 'SQL statistics' "$TMP/many.out")" -eq 0

# the frozen run's connections must be gone first (a thawed server under load closes them late)
ok "MariaDB: the frozen run's connections are gone before the next start" poll 100 0.1 sh -c "[ \"\$(mariadb -h 127.0.0.1 -P $PORT_my -u sbtest -N -B -e \"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER='sbtest'\" 2>/dev/null)\" = 1 ]"
timed many-my "${MY[@]}" --table-size=100 --threads=14 --time=2 oltp_point_select run
is "$RC" 1 "MariaDB, too many connections: exit 1"
cmp_ok "$ELAPSED" '<' 10 "MariaDB, too many connections: at once (${ELAPSED}s)"
is "$(wc -l <"$TMP/many-my.err")" 1 "MariaDB, too many connections: one line"
like "$(<"$TMP/many-my.err")" '^FATAL: cannot connect \([0-9]+ of 14 threads\): .*Too many connections.*1040.*--threads=14 needs 14 connections at once \(one per thread\), the server allows 10 \(max_connections=10\): raise max_connections or lower --threads \([0-9]+ of 14 threads had started\)$' \
    "MariaDB, too many connections: errno 1040, needed against allowed, the fix"
# MariaDB counts a connection it is about to refuse against max_connections while it is in
# flight, so with 14 threads connecting at once a thread may be refused below 10: how many
# start varies, but the refused and the started are every thread, and never more than allowed
refused=$(sed -n 's/^FATAL: cannot connect (\([0-9]*\) of 14 threads).*/\1/p' "$TMP/many-my.err")
started=$(sed -n 's/.*(\([0-9]*\) of 14 threads had started)$/\1/p' "$TMP/many-my.err")
is "$(( ${refused:-0} + ${started:-0} ))" 14 "MariaDB, too many connections: refused ($refused) and started ($started) are every thread"
cmp_ok "${started:-99}" '<=' 10 "MariaDB, too many connections: no more started than the server allows ($started)"

note "---- an SQL error names its statement, with the values, and its table: a duplicate key"
# oltp_insert without --auto-inc takes its ids from a sequence seeded by --rand-seed: a second
# run with the same seed inserts the first run's first id again (MariaDB's 1062 is fatal, as
# in sysbench; PostgreSQL retries a unique violation)
pg dup1 "${MY[@]}" --table-size=100 --auto-inc=off --rand-seed=4242 --events=3 --time=0 oltp_insert run
is "$RC" 0 "duplicate key: the first run inserts"
pg dup "${MY[@]}" --table-size=100 --auto-inc=off --rand-seed=4242 --events=3 --time=0 oltp_insert run
is "$RC" 1 "duplicate key: exit 1"
is "$(grep -c '^FATAL' "$TMP/dup.err")" 1 "duplicate key: one FATAL line"
like "$(<"$TMP/dup.err")" "^FATAL: SQL error \\(thread #0\\): Duplicate entry '-?[0-9]+' for key '[^']*PRIMARY'.*1062.*; table sbtest1, statement: INSERT INTO sbtest1 \\(id, k, c, pad\\) VALUES \\(-?[0-9]+, [0-9]+, '[0-9-]+" \
    "duplicate key: the code, the message, the table and the statement with its values"
stmt=$(sed -n 's/.*; table sbtest1, statement: //p' "$TMP/dup.err")
is "${#stmt}" 203 "duplicate key: a long statement is cut to 200 characters and '...'"
like "$stmt" '\.\.\.$' "duplicate key: the cut statement ends in '...'"
dupid=$(sed -n "s/.*Duplicate entry '\\([-0-9]*\\)'.*/\\1/p" "$TMP/dup.err")
like "$stmt" "^INSERT INTO sbtest1 \\(id, k, c, pad\\) VALUES \\(${dupid:-x}, " "duplicate key: the statement is the one that failed (id ${dupid})"

note "---- a fatal error every worker hits: a table dropped mid-run"
when_running "$PORT_pg" 4 psql -h "$SD/pg" -p "$PORT_pg" -U postgres -d sbtest -XAtq -c "DROP TABLE sbtest1" >"$TMP/drop.log" 2>&1 &
dropper=$!
pg drop "${PG[@]}" --table-size=1000 --threads=4 --time=20 oltp_read_write run
wait "$dropper"
is "$RC" 1 "table dropped: exit 1"
is "$(grep -c '^FATAL' "$TMP/drop.err")" 1 "table dropped: one FATAL line, not one per thread"
# how many threads hit it before the run stopped races (a thread can be between transactions,
# or waiting for the DROP's lock, when the first error stops the run): one to four
like "$(<"$TMP/drop.err")" '^FATAL: SQL error \([1-4] of 4 threads\): .*42P01.*relation "sbtest1" does not exist; a table of the test is missing' \
    "table dropped: how many threads, the native code and the fix"
like "$(<"$TMP/drop.err")" '; table sbtest1, statement: (SELECT|UPDATE|DELETE|INSERT) [^?]*sbtest1[^?]*[0-9]+[^?]*$' \
    "table dropped: the table and the statement with its values (no '?' left)"
ok "table dropped: the summary is under a FAILED heading" grep -q '^FAILED: the run was stopped by the error above' "$TMP/drop.out"
final_vars "$TMP/drop.out"
cmp_ok "$F_transactions" '>' 0 "table dropped: the partial summary keeps the work done ($F_transactions)"
cmp_ok "$F_total_time" '<' 20 "table dropped: the run stopped at the error ($F_total_time s)"

done_testing
