#!/bin/bash
# mysql_driver.t: `pgolab bench --db-driver=mysql` (libmariadb) against a private MariaDB server
# on loopback (datadir in /dev/shm, started and stopped here). prepare builds the sysbench schema
# (InnoDB), run executes each workload's statement mix per transaction and the server's own
# Com_* counters agree with pgolab's r/w/o counts; --db-ps-mode=auto executes server-side
# prepared statements, disable sends text only; --skip-trx sends no BEGIN/COMMIT; unix sockets
# and MYSQL_PWD work; a wrong port/password/database or --mysql-ignore-errors value exits 1 with
# a one-line message, and the password is never printed; a killed connection is reconnected
# (and the run completes) with --mysql-ignore-errors=all, and stops the run otherwise.
. "$(dirname "$0")/lib.sh"

if ! have mariadbd || ! have mariadb-install-db || ! have mariadb-admin || ! have mariadb ||
    ! have python3; then
    bail_out "needs mariadbd, mariadb-install-db, mariadb-admin, mariadb and python3 (scripts/install-deps.sh installs them)"
fi
E2E_CMD_TIMEOUT=30

PW='S3cr3t-my-pw-plugh'   # pwuser's password: must never appear in pgolab's output
BADPW='Wr0ng-my-pw-xyzzy'
MD=
MYPID=

# sql SQL: run SQL as root over the private socket, one row per line, tab-separated.
sql() {
    mariadb --no-defaults --socket="$MD/sock" -uroot -N -B -e "$1"
}

# my_up: the server answers a ping over the private socket; my_up_or_exited: or it has exited.
my_up() { mariadb-admin --no-defaults --socket="$MD/sock" -uroot ping >/dev/null 2>&1; }
my_up_or_exited() { my_up || exited "$MYPID"; }

stop_server() {
    if [ -n "$MYPID" ]; then
        timeout 20 mariadb-admin --no-defaults --socket="$MD/sock" -uroot shutdown >/dev/null 2>&1 ||
            kill -TERM "$MYPID" 2>/dev/null
    fi
    end_server "$MYPID" 200 "$MD"
    MYPID= MD=
}
on_exit 'stop_server; _e2e_cleanup'

private_server mysql MD
user_opt=()
[ "$(id -u)" = 0 ] && user_opt=(--user=root)
mariadb-install-db --no-defaults --datadir="$MD/data" "${user_opt[@]}" \
    --auth-root-authentication-method=normal >"$TMP/install.log" 2>&1 ||
    bail_out "mariadb-install-db failed: $(tail -n 3 "$TMP/install.log")"
# innodb_lock_wait_timeout=2: a lock wait (1205, ignorable) cannot outlast a 2 s run by much.
mariadbd --no-defaults "${user_opt[@]}" --datadir="$MD/data" --port="$PORT" --bind-address=127.0.0.1 \
    --socket="$MD/sock" --pid-file="$MD/pid" --log-error="$MD/err.log" --skip-log-bin \
    --innodb-buffer-pool-size=64M --innodb-log-file-size=32M --innodb-flush-log-at-trx-commit=0 \
    --innodb-lock-wait-timeout=2 >/dev/null 2>&1 &
MYPID=$!
poll 600 0.1 my_up_or_exited
my_up || bail_out "server did not start: $(tail -n 3 "$MD/err.log" 2>/dev/null)"
# sbtest: sysbench's default user, no password (also reached as sbtest@localhost, since the
# server resolves 127.0.0.1 to localhost); pwuser needs a password.
sql "CREATE DATABASE sbtest;
     CREATE USER sbtest@localhost; CREATE USER sbtest@'127.0.0.1';
     GRANT ALL ON sbtest.* TO sbtest@localhost; GRANT ALL ON sbtest.* TO sbtest@'127.0.0.1';
     CREATE USER pwuser@localhost IDENTIFIED BY '$PW'; CREATE USER pwuser@'127.0.0.1' IDENTIFIED BY '$PW';
     GRANT ALL ON sbtest.* TO pwuser@localhost; GRANT ALL ON sbtest.* TO pwuser@'127.0.0.1';" ||
    bail_out "cannot create the sbtest database and users"

MY=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT")
SMALL=(--tables=2 --table-size=1000)

# status: the server's global statement counters, as shell assignments S_<name>=N.
status() {
    sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select','Com_insert','Com_update',
         'Com_delete','Com_begin','Com_commit','Com_stmt_execute','Com_stmt_prepare')" |
        awk '{ printf "S_%s=%s\n", tolower($1), $2 }'
}

# delta NAME: counter NAME (e.g. com_select) after minus before (B_* and A_* assignments).
delta() {
    local b a
    eval "b=\${B_$1:-x}; a=\${A_$1:-x}"
    calc "$a - $b"
}

# snap PREFIX: store status() as PREFIX_<name>.
snap() {
    eval "$(status | sed "s/^S_/$1_/")"
}

note "---- driver unit tests against this server (checksums, text fallback, BEGIN/COMMIT, classes, errors)"
UNIT=$REPO_DIR/build/tests/test_mysql
if [ -x "$UNIT" ] && [ "$UNIT" -nt "$REPO_DIR/src/db/mysql.c" ] && [ "$UNIT" -nt "$REPO_DIR/tests/unit/test_mysql.c" ]; then
    PGOLAB_TEST_MYSQL_SOCKET=$MD/sock "$UNIT" >"$TMP/unit.out" 2>&1
    is "$?" 0 "build/tests/test_mysql against the server: exit 0"
    is "$(grep -cE '^\[ +OK +\] test_server_' "$TMP/unit.out")" 2 "build/tests/test_mysql: both server tests ran and passed" ||
        diag "$(tail -n 20 "$TMP/unit.out")"
else
    skip 2 "needs build/tests/test_mysql built from the current sources (make unit or make check builds it); runs only here"
fi

note "---- the status query itself does not move the counters"
snap B
snap A
is "$(delta com_select) $(delta com_stmt_execute) $(delta com_begin)" "0 0 0" \
    "SHOW GLOBAL STATUS between two snapshots: Com_select/Com_stmt_execute/Com_begin unchanged"

note "---- prepare"
pg prep "${MY[@]}" "${SMALL[@]}" --threads=2 oltp_read_write prepare
is "$RC" 0 "prepare: exit 0"
like "$(<"$TMP/prep.out")" "^Creating table 'sbtest1'\.\.\.$" "prepare: creates sbtest1"
like "$(<"$TMP/prep.out")" "^Creating table 'sbtest2'\.\.\.$" "prepare: creates sbtest2"
is "$(sql "SELECT count(*) FROM sbtest.sbtest1") $(sql "SELECT count(*) FROM sbtest.sbtest2")" "1000 1000" \
    "prepare: both tables have --table-size rows"
is "$(sql "SELECT group_concat(DISTINCT engine) FROM information_schema.tables WHERE table_schema='sbtest'")" \
    "InnoDB" "prepare: tables use the default engine (--mysql-storage-engine=innodb)"
is "$(sql "SELECT group_concat(column_name ORDER BY ordinal_position) FROM information_schema.columns
           WHERE table_schema='sbtest' AND table_name='sbtest1'")" "id,k,c,pad" "prepare: columns id,k,c,pad"
is "$(sql "SELECT extra FROM information_schema.columns WHERE table_schema='sbtest' AND table_name='sbtest1'
           AND column_name='id'")" "auto_increment" "prepare: id is AUTO_INCREMENT"
is "$(sql "SELECT count(*) FROM information_schema.statistics WHERE table_schema='sbtest' AND index_name='k_1'")" \
    "1" "prepare: secondary index k_1 exists"
is "$(sql "SELECT min(id), max(id) FROM sbtest.sbtest2" | tr '\t' ' ')" "1 1000" "prepare: ids are 1..1000"

# run_mix LABEL WORKLOAD R W O ARGS...: run WORKLOAD and check that reads, writes and others
# are R, W and O per transaction (exactly when no error was retried, within the retried
# events' statements otherwise) and that the server's Com_* counters saw the same statements.
# Leaves the deltas in D_* for further checks.
run_mix() {
    local label=$1 wl=$2 r=$3 w=$4 o=$5
    shift 5
    snap B
    pg "$label" "${MY[@]}" "${SMALL[@]}" --time=2 "$@" "$wl" run
    snap A
    is "$RC" 0 "$label: exit 0"
    final_vars "$TMP/$label.out"
    local tx=$F_transactions err=${F_ignored_errors:-x}
    cmp_ok "$tx" '>' 20 "$label: ran transactions ($tx)"
    local per=$((r + w + o))
    cmp_ok "$F_read" '>=' "$(calc "$r * $tx")" "$label: reads >= $r per transaction"
    cmp_ok "$F_read" '<=' "$(calc "$r * ($tx + $err)")" "$label: reads <= $r per transaction (+ retried events)"
    cmp_ok "$F_write" '>=' "$(calc "$w * $tx")" "$label: writes >= $w per transaction"
    cmp_ok "$F_write" '<=' "$(calc "$w * ($tx + $err)")" "$label: writes <= $w per transaction (+ retried events)"
    cmp_ok "$(calc "$F_write + $F_other")" '>=' "$(calc "($w + $o) * $tx")" \
        "$label: writes + others >= $((w + o)) per transaction"
    cmp_ok "$(calc "$F_write + $F_other")" '<=' "$(calc "($w + $o) * ($tx + $err)")" \
        "$label: writes + others <= $((w + o)) per transaction (+ retried events)"
    is "$F_total" "$(calc "$F_read + $F_write + $F_other")" "$label: total = r + w + o"
    if [ "$err" = 0 ]; then
        is "$F_read/$F_write/$F_other" "$((r * tx))/$((w * tx))/$((o * tx))" \
            "$label: no retried events, so r/w/o are exactly $r/$w/$o per transaction"
    fi
    D_select=$(delta com_select)
    D_dml=$(calc "$(delta com_insert) + $(delta com_update) + $(delta com_delete)")
    D_trx=$(calc "$(delta com_begin) + $(delta com_commit)")
    D_exec=$(delta com_stmt_execute)
    D_prep=$(delta com_stmt_prepare)
    D_begin=$(delta com_begin)
    cmp_ok "$D_select" '>=' "$F_read" "$label: server Com_select ($D_select) >= pgolab reads"
    cmp_ok "$D_select" '<=' "$(calc "$F_read + $err")" "$label: server Com_select <= pgolab reads + errors"
    is "$(calc "$D_select + $D_dml + $D_trx")" "$(calc "$F_total + $err")" \
        "$label: server Com_select+insert+update+delete+begin+commit = pgolab queries + failed ones"
}

note "---- run: oltp_read_write, server-side prepared statements"
run_mix rw oltp_read_write 14 4 2 --threads=2
cmp_ok "$D_exec" '>' 0 "rw (ps auto): Com_stmt_execute grew"
is "$D_exec" "$(calc "$D_select + $D_dml + $D_trx")" \
    "rw (ps auto): every SELECT/INSERT/UPDATE/DELETE/BEGIN/COMMIT was a prepared execution"
is "$D_prep" "$((2 * (2 * 9 + 2) + 2))" \
    "rw (ps auto): 9 statements x 2 tables + BEGIN + COMMIT, x 2 threads prepared, + 2 table checks"
is "$D_begin" "$(calc "$F_transactions + $F_ignored_errors")" "rw: one BEGIN per attempted transaction"

note "---- run: --db-ps-mode=disable"
run_mix rwtext oltp_read_write 14 4 2 --threads=2 --db-ps-mode=disable
is "$D_exec" 0 "rw (ps disable): Com_stmt_execute stays 0"
is "$D_prep" 0 "rw (ps disable): nothing prepared on the server"

note "---- run: --skip-trx (one thread: concurrent delete+insert without a transaction can collide)"
run_mix skiptrx oltp_read_write 14 4 0 --threads=1 --skip-trx
is "$D_trx" 0 "skip-trx: no BEGIN or COMMIT reached the server"

note "---- run: oltp_read_only, oltp_point_select"
run_mix ro oltp_read_only 14 0 2 --threads=2
is "$(delta com_update)$(delta com_insert)$(delta com_delete)" "000" "read_only: no writes reached the server"
run_mix ps oltp_point_select 1 0 0 --threads=2
is "$D_trx" 0 "point_select: autocommit, no BEGIN/COMMIT"
run_mix pstext oltp_point_select 1 0 0 --threads=2 --db-ps-mode=disable
is "$D_exec" 0 "point_select (ps disable): Com_stmt_execute stays 0"

note "---- unix socket, password, MYSQL_PWD, --db-debug, json"
pg sock --db-driver=mysql --mysql-socket="$MD/sock" "${SMALL[@]}" --events=50 --time=0 oltp_point_select run
is "$RC" 0 "--mysql-socket: exit 0"
like "$(head -n 1 "$TMP/sock.out")" '^sysbench 1\.0\.20 \(pgolab [^,]+, libmariadb [0-9]+\.[0-9]+\.[0-9]+\)$' \
    "banner names the client library and its version"
final_vars "$TMP/sock.out"
is "$F_transactions" 50 "--mysql-socket: ran the 50 events"

pg pwok "${MY[@]}" "${SMALL[@]}" --mysql-user=pwuser --mysql-password="$PW" --events=50 --time=0 --db-debug \
    oltp_point_select run
is "$RC" 0 "--mysql-password (right): exit 0"
like "$(<"$TMP/pwok.err")" "^debug: .*SELECT c FROM sbtest[12] WHERE id=\?" "--db-debug: prints the statements"
like "$(<"$TMP/pwok.err")" "^debug: connect to MySQL server at 127\.0\.0\.1:$PORT as 'pwuser'" \
    "--db-debug: prints where it connects"
is "$(cat "$TMP/pwok.out" "$TMP/pwok.err" | grep -c -F -- "$PW")" 0 "--db-debug: the password is not printed"

MYSQL_PWD=$PW pg pwenv "${MY[@]}" "${SMALL[@]}" --mysql-user=pwuser --events=20 --time=0 oltp_point_select run
is "$RC" 0 "MYSQL_PWD: used when --mysql-password is not given"
MYSQL_PWD=$PW pg pwempty "${MY[@]}" "${SMALL[@]}" --mysql-user=pwuser --mysql-password= --events=20 --time=0 \
    oltp_point_select run
is "$RC" 1 "MYSQL_PWD: an explicit --mysql-password= wins over it (access denied)"

pg json "${MY[@]}" "${SMALL[@]}" --mysql-user=pwuser --mysql-password="$PW" --events=20 --time=0 --format=json \
    oltp_point_select run
is "$RC" 0 "--format=json: exit 0"
like "$(<"$TMP/json.out")" '"path": *"/[^"]*libmariadb\.so[^"]*"' "--format=json: library path is the libmariadb file"
like "$(<"$TMP/json.out")" '"version": *"[0-9]+\.[0-9]+\.[0-9]+"' "--format=json: library version, dotted"
like "$(<"$TMP/json.out")" '"isolation": *"dlopen\(RTLD_GLOBAL\) of libmariadb\.so\.3 at the driver.s start"' \
    "--format=json: library isolation: loaded when the driver starts"
like "$(<"$TMP/json.out")" "\"server\": *\"MariaDB $(sql 'SELECT version()' | sed 's/-.*//' | sed 's/\./\\./g')\"" \
    "--format=json: the server's product and version"
pg info "${MY[@]}" oltp_read_only info
like "$(<"$TMP/info.out")" "^server: +MariaDB [0-9]+\.[0-9]+\.[0-9]+$" "info: names the server it connected to"
# one format for every driver's client library: the file, its dotted version, where the code is
like "$(<"$TMP/info.out")" "^library: +/.*/libmariadb\.so[.0-9]*$" "info: library is the libmariadb file"
like "$(<"$TMP/info.out")" "^version: +[0-9]+\.[0-9]+\.[0-9]+$" "info: version is dotted (as SQLite's)"
like "$(<"$TMP/info.out")" "^loaded from: +/.*/libmariadb\.so" "info: loaded from the libmariadb file"
unlike "$(<"$TMP/info.out")" "libmariadb [0-9]" "info: no 'libmariadb VERSION' in place of a file"
is "$(grep -c -F -- "$PW" "$TMP/json.out")" 0 "--format=json: the password is not printed"
like "$(<"$TMP/json.out")" '"mysql-password": *"\(hidden\)"' "--format=json: the options say only that a password was given"

note "---- bad input"
refused_port BADPORT
t0=$(date +%s.%N)
bench_fails "wrong port" "cannot connect to MySQL server at 127\.0\.0\.1:$BADPORT: .*\(errno 20[0-9][0-9]\)" \
    --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$BADPORT" --mysql-connect-timeout=60 "${SMALL[@]}" --time=1 oltp_read_write run
cmp_ok "$(calc "$(date +%s.%N) - $t0")" '<' 15 "wrong port: fails fast (a refused connection is not retried until --mysql-connect-timeout=60)"
bench_fails "wrong password" "127\.0\.0\.1:$PORT: Access denied for user 'pwuser'.*\(errno 1045\)" \
    "${MY[@]}" "${SMALL[@]}" --mysql-user=pwuser --mysql-password="$BADPW" --time=1 oltp_read_write run
is "$(cat "$TMP/err.out" "$TMP/err.err" | grep -c -F -e "$BADPW" -e "$PW")" 0 "wrong password: no password printed"
bench_fails "missing database" "database 'nope' does not exist \(create it, or use pgolab server start which does\).*1049" \
    "${MY[@]}" "${SMALL[@]}" --mysql-user=root --mysql-db=nope --time=1 oltp_read_write run
bench_fails "missing database (prepare)" "database 'nope' does not exist" \
    "${MY[@]}" "${SMALL[@]}" --mysql-user=root --mysql-db=nope oltp_read_write prepare
bench_fails "bad --mysql-ignore-errors" "^FATAL: --mysql-ignore-errors=1213,12x: '12x'" \
    "${MY[@]}" "${SMALL[@]}" --mysql-ignore-errors=1213,12x --time=1 oltp_read_write run
bench_fails "bad --mysql-storage-engine" "^FATAL: --mysql-storage-engine=inno db" \
    "${MY[@]}" "${SMALL[@]}" --mysql-storage-engine="inno db" oltp_read_write prepare
bench_fails "bad --mysql-port" "^FATAL: --mysql-port=70000" "${MY[@]}" --mysql-port=70000 oltp_read_write run
bench_fails "run on a missing table" "sbtest3.*run prepare first" "${MY[@]}" --tables=3 --time=1 oltp_read_write run

note "---- killed connections"
# kill_sbtest: kill every connection of user sbtest; prints how many.
kill_sbtest() {
    local n=0 id
    for id in $(sql "SELECT id FROM information_schema.processlist WHERE user='sbtest'"); do
        sql "KILL CONNECTION $id" 2>/dev/null && n=$((n + 1))
    done
    echo "$n"
}
# run_and_kill LABEL SECONDS ARGS...: start a run, kill its connections once it has run for a
# moment, wait for it. RC, $TMP/LABEL.{out,err}, KILLED (connections killed), T_END (s after kill).
run_and_kill() {
    local label=$1 secs=$2 pid t
    shift 2
    timeout -k 5 30 "$PGOLAB" bench "${MY[@]}" "${SMALL[@]}" --threads=2 --time="$secs" --report-interval=1 \
        "$@" oltp_read_write run >"$TMP/$label.out" 2>"$TMP/$label.err" &
    pid=$!
    poll 600 0.05 grep -q 'Threads started' "$TMP/$label.out"
    poll 300 0.05 grep -q '^\[ 1s \]' "$TMP/$label.out"  # it has run for a second (however loaded)
    KILLED=$(kill_sbtest)
    t=$(date +%s.%N)
    wait "$pid"
    RC=$?
    T_END=$(calc "$(date +%s.%N) - $t")
}

run_and_kill killall 8 --mysql-ignore-errors=all
is "$RC" 0 "killed with --mysql-ignore-errors=all: the run completes (exit 0)"
is "$KILLED" 2 "killed with --mysql-ignore-errors=all: both worker connections were killed"
final_vars "$TMP/killall.out"
cmp_ok "$(calc "$F_reconnects + $F_ignored_errors")" '>=' 2 \
    "killed with --mysql-ignore-errors=all: reconnects/errors counted ($F_reconnects/$F_ignored_errors)"
cmp_ok "$F_reconnects" '>=' 1 "killed with --mysql-ignore-errors=all: reconnects counted"
like "$(grep -E '^\[ ' "$TMP/killall.out")" 'reconn/s: [1-9]' "killed: an interval line shows reconn/s > 0"
last_tps=$(grep -E '^\[ ' "$TMP/killall.out" | tail -n 1 | sed -E 's/.* tps: ([0-9.]+) .*/\1/')
cmp_ok "$last_tps" '>' 0 "killed with --mysql-ignore-errors=all: transactions continue after the reconnect"
is "$(grep -c . "$TMP/killall.err")" 0 "killed with --mysql-ignore-errors=all: nothing on stderr"

run_and_kill killfatal 20
is "$RC" 1 "killed with the default --mysql-ignore-errors: exit 1"
like "$(<"$TMP/killfatal.err")" \
    "SQL error \\((thread #[0-9]+|[0-9]+ of [0-9]+ threads)\\): (Lost connection to server|Server has gone away|MySQL server has gone away|Connection was killed).* \\[error (2013|2006|1927)\\]; (table sbtest[0-9]+, )?statement: [A-Z].*$" \
    "killed with the default --mysql-ignore-errors: the server's message and the statement"
cmp_ok "$T_END" '<' 10 "killed with the default --mysql-ignore-errors: stops at once, not after --time"

note "---- verify: the correctness gate's query set, MySQL dialect"
pg ver1 "${MY[@]}" "${SMALL[@]}" oltp_read_only verify
is "$RC" 0 "verify: exit 0"
like "$(<"$TMP/ver1.out")" '^verify checksum: [0-9a-f]{16} \([0-9]+ rows\)$' "verify: one checksum line"
pg ver2 "${MY[@]}" "${SMALL[@]}" oltp_read_only verify
is "$(<"$TMP/ver2.out")" "$(<"$TMP/ver1.out")" "verify: the same data gives the same checksum (its writes are rolled back)"
sql "UPDATE sbtest.sbtest2 SET c = concat('x', substr(c, 2)) WHERE id = 7" >/dev/null
pg ver3 "${MY[@]}" "${SMALL[@]}" oltp_read_only verify
isnt "$(<"$TMP/ver3.out")" "$(<"$TMP/ver1.out")" "verify: one changed value changes the checksum"

note "---- cleanup"
pg clean "${MY[@]}" "${SMALL[@]}" oltp_read_write cleanup
is "$RC" 0 "cleanup: exit 0"
like "$(<"$TMP/clean.out")" "^Dropping table 'sbtest2'\.\.\.$" "cleanup: drops sbtest2"
is "$(sql "SELECT count(*) FROM information_schema.tables WHERE table_schema='sbtest'")" 0 "cleanup: no tables left"

done_testing
