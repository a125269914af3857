#!/bin/bash
# server_pgsql.t: `pgolab server start|status|stop` with PostgreSQL 15. A generated datadir in
# /dev/shm: as root the server runs as user postgres (it refuses root) in its own session and
# listens on 127.0.0.1 only; psql and sysbench reach sbtest/sbtest with the printed options,
# the postgres superuser has no TCP access; --server-option becomes -c NAME=VALUE; stop is a
# clean fast shutdown, the process is gone and the datadir removed. A given datadir under a
# directory postgres cannot search is refused with the fix named (nothing created). Kept
# datadir: a restart runs no initdb and keeps the data. A password is enforced over TCP
# (wrong/none refused), dropping it on a restart opens TCP again, and it never appears in
# output, log, state file or argv. A long datadir path gets its socket in /tmp (removed at
# stop). Bad input fails in one line with exit 1; a server that exits at once fails fast with
# its log tail; a start timeout and SIGINT while waiting leave no server and no datadir.
. "$(dirname "$0")/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || bail_out "$PGBIN/postgres not installed (make deps installs postgresql)"
have psql || bail_out "psql is not installed (make deps installs postgresql)"

SERVER_ARGS_RE='postgres -D '  # what precedes a datadir on the server's command line
on_exit srv_cleanup

# running_in DIR: some postgres runs with -D DIR
running_in() { pgrep -f -- "postgres -D $1( |\$)" >/dev/null; }
# q SQL...: as sbtest over TCP (PGPASSWORD as set by the caller)
q() { psql -X -h 127.0.0.1 -p "$PORT" -U sbtest -d sbtest -Atc "$*" </dev/null 2>&1; }

unset PGPASSWORD PGHOST PGPORT PGUSER PGDATABASE

note "---- start with a generated datadir"
srv s1 start --db-driver=pgsql --server-option=fsync=off
is "$RC" 0 "start: exit 0"
started s1
is "$(<"$TMP/s1.err")" "" "start: nothing on stderr"
like "$(field s1 server)" '^postgres 15\.[0-9]+ \(pid [0-9]+\)$' "start: 'server: postgres VERSION (pid N)'"
like "$D" '^/dev/shm/pgolab-pgsql\.[A-Za-z0-9]{6}$' "start: generated datadir in /dev/shm"
is "$(field s1 client)" "--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PORT --pgsql-user=sbtest --pgsql-db=sbtest" \
    "start: prints the client options"
is "$(field s1 socket)" "$D/.s.PGSQL.$PORT" "start: the socket is in the datadir"
running_checks
if [ "$(id -u)" -eq 0 ]; then
    is "$(ps -o user= -p "$PID")" "postgres" "as root: the server runs as user postgres"
    is "$(stat -c '%U %a' "$D")" "postgres 700" "as root: the datadir belongs to postgres, mode 700"
else
    is "$(ps -o user= -p "$PID")" "$(id -un)" "the server runs as this user"
    is "$(stat -c '%a' "$D")" "700" "the datadir has mode 700"
fi

note "---- status, psql, sysbench"
srv st1 status --datadir="$D"
is "$RC" 0 "status: exit 0 while running"
is "$(field st1 status)" "running (accepting connections)" "status: running"
like "$(field st1 version)" '^PostgreSQL 15\.' "status: the version the server reports"
is "$(q 'select current_user, current_database()')" "sbtest|sbtest" "psql: sbtest reaches sbtest over TCP, no password"
is "$(PGPASSWORD=password q 'select 1')" "1" "psql: without a configured password any password is accepted"
is "$(q 'create table t0 (a int); insert into t0 values (1); select count(*) from t0' | tail -1)" "1" \
    "psql: sbtest may create tables in sbtest"
is "$(q 'show fsync')" "off" "--server-option=fsync=off reached postgres (-c fsync=off)"
is "$(q 'show listen_addresses')" "127.0.0.1" "listen_addresses=127.0.0.1"
psql -X -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -Atc 'select 1' </dev/null >/dev/null 2>&1
isnt "$?" 0 "psql: the postgres superuser cannot log in over TCP"
sysbench_checks pgsql s1

note "---- bad input"
server_fails "second start" "a server is already running there \(pid $PID\)" start --db-driver=pgsql --datadir="$D"
server_fails "port in use" "^FATAL: --port=$PORT: already in use on 127\.0\.0\.1$" start --db-driver=pgsql --port="$PORT"
server_fails "no binary" '^FATAL: --server=/nonexistent/postgres: no such file$' start --db-driver=pgsql --server=/nonexistent/postgres
server_fails "ls" "^FATAL: --server=/bin/ls: not a PostgreSQL server \(its --version says 'ls \(GNU coreutils\)" \
    start --db-driver=pgsql --server=/bin/ls
server_fails "psql" "^FATAL: --server=$PGBIN/psql: not a PostgreSQL server \(its --version says 'psql \(PostgreSQL\)" \
    start --db-driver=pgsql --server="$PGBIN/psql"
if [ -x /usr/sbin/mariadbd ]; then
    server_fails "mariadbd" "^FATAL: --server=/usr/sbin/mariadbd: not a PostgreSQL server" \
        start --db-driver=pgsql --server=/usr/sbin/mariadbd
else
    skip 3 "needs /usr/sbin/mariadbd (make deps installs mariadb-server); runs only here"
fi
mkdir -p "$TMP/junk" && echo keep >"$TMP/junk/notes.txt"
server_fails "non-empty datadir" "^FATAL: --datadir=$TMP/junk: not empty and not a PostgreSQL data directory$" \
    start --db-driver=pgsql --datadir="$TMP/junk"
is "$(ls -A "$TMP/junk")" "notes.txt" "non-empty datadir: nothing added or deleted"
mkdir -p "$TMP/my/mysql" && : >"$TMP/my/ibdata1"
server_fails "MariaDB datadir" "not empty and not a PostgreSQL data directory \(it holds a MariaDB/MySQL one\)" \
    start --db-driver=pgsql --datadir="$TMP/my"
server_fails "bare setting" "--server-option=fsync: expected NAME=VALUE" start --db-driver=pgsql --server-option=fsync
server_fails "managed setting" "--server-option=listen_addresses=\*: pgolab sets that itself" \
    start --db-driver=pgsql --server-option='listen_addresses=*'
server_fails "mysql option" "--mysql-db is for --db-driver=mysql" start --db-driver=pgsql --mysql-db=x
server_fails "superuser" "--pgsql-user=postgres: that is the server's administrator" start --db-driver=pgsql --pgsql-user=postgres
server_fails "driver mismatch" "--db-driver=mysql: the server in $D is --db-driver=pgsql" status --datadir="$D" --db-driver=mysql
server_fails "status with a start option" "--port is an option of 'pgolab server start', not of status" \
    status --datadir="$D" --port=1
if [ "$(id -u)" -eq 0 ]; then
    chmod 700 "$TMP"
    server_fails "unreachable datadir" \
        "the server runs as user postgres, who cannot reach it: $TMP \(mode 0700, owner root\) .*chmod o\+x $TMP$" \
        start --db-driver=pgsql --datadir="$TMP/pg"
    ok "unreachable datadir: nothing created" test ! -e "$TMP/pg"
else
    skip 4 "needs root (the server runs as user postgres); runs only here"
fi

note "---- stop"
stop_checks stop1 postgres

note "---- a given datadir, kept; restart without initdb"
chmod 711 "$TMP"  # postgres must be able to reach $TMP/...
G=$TMP/pgdata
srv g1 start --db-driver=pgsql --datadir="$G"
is "$RC" 0 "given datadir: start exit 0"
started g1
is "$D" "$G" "given datadir: used as it is"
q 'create table t1 (a int); insert into t1 values (42)' >/dev/null
srv g1stop stop --datadir="$G"
is "$RC" 0 "given datadir: stop exit 0"
ok "given datadir: kept" test -f "$G/PG_VERSION"
like "$(tail -2 "$G/pgolab-server.log")" "database system is shut down" "given datadir: the log ends with a clean shutdown"
is "$(grep -c '^---- pgolab: .*/initdb ' "$G/pgolab-server.log")" 1 "given datadir: initdb ran once"

note "---- a password, then none"
PW='Pw-7hR2xq'
srv pw1 start --db-driver=pgsql --datadir="$G" --pgsql-password="$PW"
is "$RC" 0 "password: restart exit 0"
started pw1
is "$(grep -c '^---- pgolab: .*/initdb ' "$G/pgolab-server.log")" 1 "restart: no initdb"
is "$(PGPASSWORD=$PW q 'select a from t1')" "42" "restart: the table made before is still there (right password)"
like "$(PGPASSWORD=wrong q 'select 1')" 'password authentication failed for user "sbtest"' "password: a wrong one is refused"
like "$(PGPASSWORD= q 'select 1')" 'no password supplied|password authentication failed' "password: none is refused"
like "$(field pw1 account)" "password set \(not shown\)" "password: start says it is set"
srv pw1st status --datadir="$G"
ok "password: not on the server's command line" bash -c "! grep -qa -- '$PW' /proc/$PID/cmdline"
srv pw1stop stop --datadir="$G"
is "$RC" 0 "password: stop exit 0"
ok "password: not in pgolab's output" bash -c "! cat '$TMP'/pw1*.out '$TMP'/pw1*.err | grep -q -- '$PW'"
ok "password: not in the log, the state file or the datadir" bash -c "! grep -rqa -- '$PW' '$G'"
srv pw2 start --db-driver=pgsql --datadir="$G"
started pw2
is "$(PGPASSWORD= q 'select a from t1')" "42" "no password on a restart: TCP needs none again"
srv pw2stop stop --datadir="$G"

note "---- a datadir path too long for a unix socket"
L=$TMP/$(printf 'd%.0s' $(seq 1 100))
srv long start --db-driver=pgsql --datadir="$L"
is "$RC" 0 "long path: start exit 0"
started long
SD=$(field long socket | sed 's/\/\.s\.PGSQL\..*//')
like "$SD" '^/tmp/pgolab-sock\.[A-Za-z0-9]{6}$' "long path: socket in a private /tmp directory"
is "$(psql -X -h "$SD" -p "$PORT" -U sbtest -d sbtest -Atc 'select 1' </dev/null 2>&1)" "1" \
    "long path: psql over that socket"
srv longstop stop --datadir="$L"
is "$RC" 0 "long path: stop exit 0"
ok "long path: the socket directory is removed" test ! -e "$SD"

note "---- failures while starting"
srv bad start --db-driver=pgsql --server-option=no_such_setting=1
is "$RC" 1 "exits at once: exit 1"
like "$(head -1 "$TMP/bad.err")" "^FATAL: $PGBIN/postgres exited during start-up \(exit status [0-9]+\): .*FATAL: +unrecognized configuration parameter \"no_such_setting\"$" \
    "exits at once: says so, quoting the log's FATAL line"
like "$(<"$TMP/bad.err")" 'unrecognized configuration parameter "no_such_setting"' "exits at once: the log tail shows why"
bad=$(tail_datadir bad)
ok "exits at once: the generated datadir is removed" test -n "$bad" -a ! -e "$bad"
like "$(cat "$bad.log" 2>/dev/null)" 'unrecognized configuration parameter "no_such_setting"' \
    "exits at once: the log the message names is kept ($bad.log)"
rm -f "$bad.log"

# pre_auth_delay: the server is up but answers no connection for 3 s (each attempt gives up
# after 2 s), so pgolab keeps waiting
# initdb runs within --timeout too (2-5 s on a loaded 2-core machine): 20 s leaves room for
# it, and pre_auth_delay=60 keeps every connection from being accepted within them
start_timeout_checks "database system is ready to accept connections" 45 20 --db-driver=pgsql --server-option=pre_auth_delay=60

note "---- killed with SIGKILL: stop frees its shared memory"
# PostgreSQL's /dev/shm/PostgreSQL.N segments and its System V segment outlive a kill -9; only
# a new start on the datadir frees them (stop runs postgres --single before removing it).
# The segments are this server's: those its postmaster maps (other tests' servers run beside).
srv k1 start --db-driver=pgsql
is "$RC" 0 "kill -9: start exit 0"
started k1
dsm_ours=$(grep -o '/dev/shm/PostgreSQL\.[0-9]*' "/proc/$PID/maps" 2>/dev/null | sort -u)
isnt "$dsm_ours" "" "kill -9: the postmaster maps /dev/shm/PostgreSQL.* segments ($(echo $dsm_ours))"
kill -KILL "$PID"
# SIGKILL is delivered asynchronously: stop must find the postmaster gone (or a zombie), not
# still dying (then it would signal it and warn about its log instead)
dead() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -z "$st" ] || [ "${st#Z}" != "$st" ]; }
poll 200 0.05 dead "$PID"
srv k1stop stop --datadir="$D"
is "$RC" 0 "kill -9: stop exit 0"
like "$(<"$TMP/k1stop.err")" "^WARNING: .*postgres \(pid $PID\) was not running$" "kill -9: stop warns it was not running (and nothing else)"
is "$(for f in $dsm_ours; do [ -e "$f" ] && echo "$f"; done)" "" "kill -9: none of its /dev/shm/PostgreSQL.* segments is left"
is "$(ipcs -m -p | awk -v p="$PID" '$3 == p' | wc -l)" 0 "kill -9: no System V segment created by the postmaster is left"
ok "kill -9: the generated datadir is removed" test ! -e "$D"

note "---- SIGINT while waiting for the server"
sigint_checks "ready to accept connections" --db-driver=pgsql --server-option=pre_auth_delay=3

done_testing
