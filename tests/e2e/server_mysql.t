#!/bin/bash
# server_mysql.t: `pgolab server start|status|stop` with MariaDB. A generated datadir in
# /dev/shm: the server runs in its own session, listens on 127.0.0.1 only, the real client and
# sysbench reach the sbtest account/database with the printed options, root has no TCP
# account; stop is clean, the process is gone and the datadir removed. --keep-datadir keeps it
# and a restart on it does not re-initialize (a table made before is still there);
# --server-option reaches mariadbd; a second start on a running datadir is refused. A password
# is enforced over TCP (wrong/none refused), a restart changes it, and it never appears in
# output, log, state file or argv. Bad input fails in one line with exit 1 and leaves nothing:
# missing binary, /bin/ls or the client as the server, a non-empty non-datadir (untouched),
# port in use, managed --server-option; a server that exits at once fails fast with its log
# tail; a start timeout reports the log tail and removes the datadir; SIGINT while waiting for
# the server or during the datadir's initialization exits 2 and leaves no process and no
# datadir; a stop that has to SIGKILL is an error. Runs as root or not.
. "$(dirname "$0")/lib.sh"

[ -x /usr/sbin/mariadbd ] || bail_out "/usr/sbin/mariadbd not installed (make deps installs mariadb-server)"
have mariadb || bail_out "the mariadb client is not installed (make deps installs mariadb-client)"

DATADIRS=()  # every datadir a server may run in: stopped at exit, whatever happened

# srv NAME ARGS...: `pgolab server ARGS` (capped); stdout $TMP/NAME.out, stderr $TMP/NAME.err, $RC
srv() {
    local name=$1
    shift
    timeout -k 5 "$E2E_CMD_TIMEOUT" "$PGOLAB" server "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then diag "pgolab server $* timed out"; fi
    return 0
}
# field NAME KEY: the value of "KEY: value" in $TMP/NAME.out (first line)
field() { sed -n "s/^$2: *//p" "$TMP/$1.out" | head -1; }
# started NAME: sets D (datadir), PORT, PID from a start's output and remembers D for cleanup
started() {
    D=$(field "$1" datadir | sed 's/ (.*//')
    PORT=$(field "$1" port | sed 's/^127\.0\.0\.1://')
    PID=$(field "$1" server | sed -n 's/.*(pid \([0-9]*\))$/\1/p')
    [ -n "$D" ] && DATADIRS+=("$D")
}
# state_pid DIR: the pid recorded in DIR's state file
state_pid() { sed -n 's/^ *"pid": \([0-9]*\),$/\1/p' "$1/pgolab-server.json" 2>/dev/null; }
# running_in DIR: some mariadbd runs with --datadir=DIR
running_in() { pgrep -f -- "mariadbd .*--datadir=$1( |$)" >/dev/null; }
# gone PID: no such process within 10 s (a stopped server is reaped by its parent)
gone() {
    local i
    for i in $(seq 1 100); do
        [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = "" ] && return 0
        [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ] && return 0
        sleep 0.1
    done
    return 1
}
# my SQL...: as sbtest over TCP
my() { mariadb -h127.0.0.1 -P"$PORT" -usbtest sbtest -Nse "$*" 2>&1; }
# listens_only_loopback PORT: LISTEN on 127.0.0.1:PORT and on no other address (IPv4 or 6)
listens_only_loopback() {
    local hex
    hex=$(printf '%04X' "$1")
    grep -q "^ *[0-9]*: 0100007F:$hex [0-9A-F:]* 0A " /proc/net/tcp || return 1
    ! grep -v "0100007F:$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ":$hex [0-9A-F:]* 0A "
}

_srv_cleanup() {
    local d pid
    for d in "${DATADIRS[@]}"; do
        [ -f "$d/pgolab-server.json" ] || continue
        timeout 70 "$PGOLAB" server stop --datadir="$d" >/dev/null 2>&1 && continue
        pid=$(state_pid "$d")
        [ -n "$pid" ] && grep -qa -- "$d" "/proc/$pid/cmdline" 2>/dev/null && kill -KILL "$pid"
    done
    for d in "${DATADIRS[@]}"; do
        case $d in /dev/shm/pgolab-mysql.* | "$TMP"/*) rm -rf "$d" ;; esac
    done
    _e2e_cleanup
}
trap _srv_cleanup EXIT

note "---- help"
srv help help
is "$RC" 0 "help: exit 0"
like "$(cat "$TMP/help.out")" 'pgolab server start --db-driver=mysql\|pgsql' "help: shows start"
like "$(cat "$TMP/help.out")" '--keep-datadir' "help: shows --keep-datadir"

note "---- start with a generated datadir"
srv s1 start --db-driver=mysql
is "$RC" 0 "start: exit 0"
started s1
is "$(cat "$TMP/s1.err")" "" "start: nothing on stderr"
like "$(field s1 server)" '^mariadbd [0-9]+\.[0-9]+\.[0-9]+ \(pid [0-9]+\)$' "start: 'server: mariadbd VERSION (pid N)'"
like "$D" '^/dev/shm/pgolab-mysql\.[A-Za-z0-9]{6}$' "start: generated datadir in /dev/shm"
like "$(field s1 datadir)" "removes it unless --keep-datadir" "start: says stop removes the generated datadir"
ok "start: the log exists in the datadir" test -s "$D/pgolab-server.log"
is "$(field s1 log)" "$D/pgolab-server.log" "start: prints the log"
like "$PORT" '^[0-9]+$' "start: prints the port"
is "$(field s1 client)" "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest --mysql-db=sbtest" \
    "start: prints the client options"
like "$(cat "$TMP/s1.out")" "--mysql-socket=$D/mysql.sock" "start: prints the socket option"
is "$(field s1 stop)" "pgolab server stop --datadir=$D" "start: prints how to stop it"
ok "start: the server runs after pgolab exited" kill -0 "$PID"
is "$(state_pid "$D")" "$PID" "start: state file records the pid"
is "$(ps -o sid= -p "$PID" | tr -d ' ')" "$PID" "start: the server leads its own session (no terminal signals)"
ok "start: listens on 127.0.0.1:$PORT only" listens_only_loopback "$PORT"
ok "start: --bind-address=127.0.0.1 on its command line" grep -qa -- '--bind-address=127.0.0.1' "/proc/$PID/cmdline"

note "---- status and the real client"
srv st1 status --datadir="$D"
is "$RC" 0 "status: exit 0 while running"
is "$(field st1 status)" "running (accepting connections)" "status: running"
like "$(field st1 version)" '^MariaDB 10\.' "status: the version the server reports"
is "$(field st1 port)" "127.0.0.1:$PORT" "status: the port"
is "$(my 'select 1')" "1" "client: sbtest reaches sbtest over TCP, no password"
is "$(my 'select current_user(), database()')" "sbtest@127.0.0.1	sbtest" "client: user sbtest@127.0.0.1, database sbtest"
is "$(mariadb -S "$D/mysql.sock" -usbtest sbtest -Nse 'select current_user()' 2>&1)" "sbtest@localhost" \
    "client: sbtest@localhost over the socket"
is "$(my 'create table t0 (a int primary key); insert into t0 values (1); select count(*) from t0')" "1" \
    "client: sbtest may create tables in sbtest"
mariadb -h127.0.0.1 -P"$PORT" -uroot -e 'select 1' >/dev/null 2>&1
isnt "$?" 0 "client: no root account over TCP"
if have sysbench; then
    sb=(sysbench $(field s1 client | sed 's/--db-driver=mysql //') --db-driver=mysql --tables=1 --table-size=200)
    "${sb[@]}" oltp_point_select prepare >"$TMP/sbp.out" 2>&1
    is "$?" 0 "sysbench: prepare with the printed options"
    "${sb[@]}" --time=1 oltp_point_select run >"$TMP/sbr.out" 2>&1
    is "$?" 0 "sysbench: run with the printed options"
    like "$(cat "$TMP/sbr.out")" '^ +transactions: +[1-9][0-9]* ' "sysbench: transactions ran"
else
    skip 3 "sysbench not installed"
fi

note "---- bad input while a server runs"
# fails NAME ERE ARGS...: exit 1, exactly one stderr line matching ERE, nothing on stdout
fails() {
    local name=$1 re=$2
    shift 2
    srv "$name" "$@"
    is "$RC" 1 "$name: exit 1"
    is "$(wc -l <"$TMP/$name.err" | tr -d ' ')" 1 "$name: one line on stderr"
    like "$(cat "$TMP/$name.err")" "$re" "$name: names the problem"
    is "$(cat "$TMP/$name.out")" "" "$name: nothing on stdout"
}
fails "second start" "a server is already running there \(pid $PID\)" start --db-driver=mysql --datadir="$D"
ok "second start: the first server still runs" kill -0 "$PID"
fails "port in use" "^FATAL: --port=$PORT: already in use on 127\.0\.0\.1$" start --db-driver=mysql --port="$PORT" --datadir="$TMP/p"
ok "port in use: no datadir created" test ! -e "$TMP/p"
fails "no binary" '^FATAL: --server=/nonexistent/mariadbd: no such file$' start --db-driver=mysql --server=/nonexistent/mariadbd
fails "ls" "^FATAL: --server=/bin/ls: not a MariaDB/MySQL server \(its --version says 'ls \(GNU coreutils\)" \
    start --db-driver=mysql --server=/bin/ls
fails "true" "^FATAL: --server=/bin/true: not a MariaDB/MySQL server" start --db-driver=mysql --server=/bin/true
fails "the client" "^FATAL: --server=/usr/bin/mariadb: not a MariaDB/MySQL server .*Distrib" \
    start --db-driver=mysql --server=/usr/bin/mariadb
mkdir -p "$TMP/junk" && echo keep >"$TMP/junk/notes.txt"
fails "non-empty datadir" "^FATAL: --datadir=$TMP/junk: not empty and not a MariaDB data directory$" \
    start --db-driver=mysql --datadir="$TMP/junk"
is "$(ls -A "$TMP/junk")" "notes.txt" "non-empty datadir: nothing added or deleted"
is "$(cat "$TMP/junk/notes.txt")" "keep" "non-empty datadir: the file is untouched"
echo x >"$TMP/afile"
fails "datadir is a file" "--datadir=$TMP/afile: not a directory" start --db-driver=mysql --datadir="$TMP/afile"
fails "managed option" "--server-option=socket=/tmp/x.sock: pgolab sets that itself" \
    start --db-driver=mysql --server-option=socket=/tmp/x.sock
fails "no driver" "start needs --db-driver=mysql or --db-driver=pgsql" start
fails "bad driver" "--db-driver=oracle: expected mysql or pgsql" start --db-driver=oracle
fails "pgsql option" "--pgsql-user is for --db-driver=pgsql" start --db-driver=mysql --pgsql-user=x
fails "stop without datadir" "stop needs --datadir=DIR" stop
fails "stop, no state" "$TMP/junk: no pgolab server state there" stop --datadir="$TMP/junk"
fails "status, no state" "no pgolab server state there" status --datadir="$TMP/junk"
fails "unknown command" "unknown command 'restart'" restart
fails "unknown option" "^invalid option: --frobnicate=1$" start --db-driver=mysql --frobnicate=1

note "---- stop"
srv stop1 stop --datadir="$D"
is "$RC" 0 "stop: exit 0"
is "$(cat "$TMP/stop1.err")" "" "stop: nothing on stderr"
like "$(field stop1 stopped)" "^mariadbd \(pid $PID\), clean shutdown$" "stop: says it was a clean shutdown"
ok "stop: the process is gone" gone "$PID"
ok "stop: the generated datadir is removed" test ! -e "$D"
srv st2 status --datadir="$D"
is "$RC" 1 "status after stop: exit 1"

note "---- --keep-datadir, restart without re-init, --server-option"
srv k1 start --db-driver=mysql --keep-datadir --server-option=innodb_buffer_pool_size=64M
is "$RC" 0 "keep: start exit 0"
started k1
like "$(field k1 datadir)" "kept by 'pgolab server stop'" "keep: start says the datadir will be kept"
is "$(my 'select @@innodb_buffer_pool_size')" "67108864" "--server-option=innodb_buffer_pool_size=64M reached mariadbd"
my 'create table t1 (a int); insert into t1 values (42)' >/dev/null
srv k1stop stop --datadir="$D"
is "$RC" 0 "keep: stop exit 0"
ok "keep: the process is gone" gone "$PID"
ok "keep: datadir kept" test -d "$D/mysql"
ok "keep: the state file is gone" test ! -e "$D/pgolab-server.json"
like "$(tail -3 "$D/pgolab-server.log")" "Shutdown complete" "keep: the log ends with a clean shutdown"
is "$(grep -c 'install-db' "$D/pgolab-server.log")" 1 "keep: initialized once"
srv k2 start --db-driver=mysql --datadir="$D"
is "$RC" 0 "restart on the kept datadir: exit 0"
started k2
is "$(grep -c 'install-db' "$D/pgolab-server.log")" 1 "restart: no re-initialization"
is "$(my 'select a from t1')" "42" "restart: the table made before is still there"
is "$(my 'select @@innodb_buffer_pool_size')" "134217728" "restart: default buffer pool without the option"
srv k2stop stop --datadir="$D"
is "$RC" 0 "restart: stop exit 0"
ok "restart: a given datadir is kept" test -d "$D/mysql"
like "$(field k2stop datadir)" "kept$" "restart: stop says the datadir is kept"
rm -rf "$D"

note "---- a given datadir, a password"
PW='Pw-9f3kQz'
G=$TMP/given
srv g1 start --db-driver=mysql --datadir="$G" --mysql-password="$PW" --server-option=innodb_buffer_pool_size=32M
is "$RC" 0 "given datadir: start exit 0"
started g1
is "$D" "$G" "given datadir: used as it is"
like "$(field g1 account)" "password set \(not shown\)" "password: start says it is set"
is "$(mariadb -h127.0.0.1 -P"$PORT" -usbtest -p"$PW" sbtest -Nse 'select 1' 2>&1)" "1" "password: the right one works"
out=$(mariadb -h127.0.0.1 -P"$PORT" -usbtest -pwrong sbtest -Nse 'select 1' 2>&1)
isnt "$?" 0 "password: a wrong one is refused"
like "$out" "Access denied" "password: wrong one, 'Access denied'"
mariadb -h127.0.0.1 -P"$PORT" -usbtest sbtest -Nse 'select 1' >/dev/null 2>&1
isnt "$?" 0 "password: none is refused"
srv g1st status --datadir="$G"
srv g1stop stop --datadir="$G"
is "$RC" 0 "password: stop exit 0"
srv g2 start --db-driver=mysql --datadir="$G" --mysql-password=other-Pw2
started g2
is "$(mariadb -h127.0.0.1 -P"$PORT" -usbtest -pother-Pw2 sbtest -Nse 'select 1' 2>&1)" "1" "password: a restart sets the new one"
mariadb -h127.0.0.1 -P"$PORT" -usbtest -p"$PW" sbtest -Nse 'select 1' >/dev/null 2>&1
isnt "$?" 0 "password: the old one no longer works"
ok "password: not on the server's command line" bash -c "! grep -qa -- '$PW' /proc/$PID/cmdline"
ok "password: not in pgolab's output" bash -c "! cat '$TMP'/g1*.out '$TMP'/g1*.err '$TMP'/g2.out '$TMP'/g2.err | grep -q -- '$PW'"
ok "password: not in the log or the state file" bash -c "! grep -rq -- '$PW' '$G/pgolab-server.log' '$G/pgolab-server.json'"

note "---- a stop that has to SIGKILL is an error"
kill -STOP "$PID"  # a stopped process cannot act on SIGTERM; SIGKILL still ends it
srv kill stop --datadir="$G" --timeout=1
is "$RC" 1 "SIGKILL: exit 1"
like "$(head -1 "$TMP/kill.err")" "did not shut down within 1 s: killed it \(SIGKILL\).*not a clean shutdown" \
    "SIGKILL: says so"
ok "SIGKILL: the process is gone" gone "$PID"
rm -rf "$G"

note "---- failures while starting"
srv bad start --db-driver=mysql --server-option=no-such-variable=1
is "$RC" 1 "exits at once: exit 1"
like "$(head -1 "$TMP/bad.err")" "^FATAL: /usr/sbin/mariadbd exited during start-up \(exit status [0-9]+\)$" \
    "exits at once: says so"
like "$(cat "$TMP/bad.err")" "unknown variable 'no-such-variable=1'" "exits at once: the log tail shows why"
bad=$(sed -n 's/^---- last lines of \(.*\)\/pgolab-server.log:$/\1/p' "$TMP/bad.err")
like "$bad" '^/dev/shm/pgolab-mysql\.' "exits at once: the tail names the generated datadir"
ok "exits at once: that datadir is removed" test ! -e "$bad"

echo 'SELECT SLEEP(20);' >"$TMP/sleep.sql"
t0=$(date +%s)
srv slow start --db-driver=mysql --timeout=2 --server-option=init-file="$TMP/sleep.sql"
t1=$(date +%s)
is "$RC" 1 "start timeout: exit 1"
like "$(head -1 "$TMP/slow.err")" "did not accept connections within 2 s" "start timeout: says so"
like "$(cat "$TMP/slow.err")" "Server socket created" "start timeout: shows the log tail"
slow=$(sed -n 's/^---- last lines of \(.*\)\/pgolab-server.log:$/\1/p' "$TMP/slow.err")
ok "start timeout: the generated datadir is removed" test -n "$slow" -a ! -e "$slow"
ok "start timeout: no server left" bash -c "! pgrep -f -- '--datadir=$slow( |\$)' >/dev/null"
cmp_ok "$((t1 - t0))" '<' 20 "start timeout: gave up in time ($((t1 - t0)) s)"

note "---- SIGINT while waiting for the server"
S=$TMP/sigint
"$PGOLAB" server start --db-driver=mysql --datadir="$S" --server-option=init-file="$TMP/sleep.sql" \
    >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
DATADIRS+=("$S")
for i in $(seq 1 100); do
    grep -q "Server socket created" "$S/pgolab-server.log" 2>/dev/null && break
    sleep 0.1
done
ok "SIGINT: the server was up (and not ready) when the signal came" running_in "$S"
kill -INT "$pid"
wait "$pid"
is "$?" 2 "SIGINT: exit 2"
like "$(cat "$TMP/int.err")" "interrupted .* stopped it, nothing left running" "SIGINT: says so"
ok "SIGINT: no server left" bash -c "! pgrep -f -- '--datadir=$S( |\$)' >/dev/null"
ok "SIGINT: the datadir pgolab created is removed" test ! -e "$S"

note "---- SIGINT while the datadir is initialized"
# The bootstrap mariadbd that mariadb-install-db runs must be gone (and the datadir removed)
# when pgolab exits: a bootstrap still shutting down would write into the removed datadir.
S=$TMP/sigint-init
"$PGOLAB" server start --db-driver=mysql --datadir="$S" >"$TMP/int2.out" 2>"$TMP/int2.err" &
pid=$!
DATADIRS+=("$S")
caught=
for i in $(seq 1 500); do
    pgrep -f -- "--bootstrap .*--datadir=$S( |\$)" >/dev/null && caught=1 && break
    sleep 0.01
done
if [ -n "$caught" ]; then
    kill -INT "$pid"
    wait "$pid"
    is "$?" 2 "SIGINT in init: exit 2"
    ok "SIGINT in init: no bootstrap or server left" bash -c "! pgrep -f -- '--datadir=$S( |\$)' >/dev/null"
    ok "SIGINT in init: the datadir pgolab created is removed" test ! -e "$S"
    sleep 1
    ok "SIGINT in init: and nothing recreated it" test ! -e "$S"
else
    wait "$pid"
    skip 4 "the bootstrap ended before it was seen"
fi

done_testing
