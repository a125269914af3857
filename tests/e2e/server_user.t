#!/bin/bash
# server_user.t: managed servers as a normal (unprivileged) user. Run as root, the script runs
# pgolab as the user "nobody" (runuser; a copy of the binary in a directory nobody can read);
# run as anyone else, it runs pgolab as that user. For MariaDB and PostgreSQL: `pgolab server
# start` (the server then runs as that user: no --user=root, no switch to postgres), a prepare
# and a run over the unix socket, `pgolab server stop` (clean shutdown, datadir removed); then
# a managed A/A `pgolab compare` of MariaDB as that user. Nothing is left running.
. "$(dirname "$0")/lib.sh"

MARIADBD=/usr/sbin/mariadbd
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$MARIADBD" ] || bail_out "$MARIADBD missing (scripts/install-deps.sh installs mariadb-server)"
[ -x "$PGBIN/postgres" ] || bail_out "$PGBIN/postgres missing (scripts/install-deps.sh installs postgresql)"

if [ "$(id -u)" -eq 0 ]; then
    USR=nobody
    getent passwd "$USR" >/dev/null || bail_out "no user '$USR' on this machine"
    have runuser || bail_out "runuser missing (util-linux)"
    # nobody's own directory for the binary, the results and the work directory ($TMP is 0700)
    HOME_DIR=$(mktemp -d /tmp/pgolab-e2e-user.XXXXXX)
    chmod 755 "$HOME_DIR"
    cp "$PGOLAB" "$HOME_DIR/pgolab"
    chown "$USR" "$HOME_DIR"
    as_user() { (cd "$HOME_DIR" && runuser -u "$USR" -- env HOME="$HOME_DIR" "$@"); }
    BIN=$HOME_DIR/pgolab
else
    USR=$(id -un)
    HOME_DIR=$TMP
    as_user() { "$@"; }
    BIN=$PGOLAB
fi
WD=$(mktemp -u /dev/shm/pgolab-e2e-userwd.XXXXXX)
DATADIRS=()
cleanup_user() {
    for d in "${DATADIRS[@]}"; do
        [ -d "$d" ] && as_user timeout 60 "$BIN" server stop --datadir="$d" >/dev/null 2>&1
    done
    [ "$HOME_DIR" != "$TMP" ] && rm -rf "$HOME_DIR"
    rm -rf "$WD"
    _e2e_cleanup
}
on_exit cleanup_user

# run NAME ARGS...: pgolab ARGS as the user; stdout $TMP/NAME.out, stderr $TMP/NAME.err, $RC
run() {
    local name=$1
    shift
    as_user timeout -k 5 120 "$BIN" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
field() { sed -n "s/^$2: *//p" "$TMP/$1.out" | head -1; }
owner() { ps -o user= -p "$1" 2>/dev/null | tr -d ' '; }

for drv in mysql pgsql; do
    note "---- $drv as $USR"
    run "$drv-start" server start --db-driver="$drv"
    is "$RC" 0 "$drv start as $USR: exit 0" || diag "$(<"$TMP/$drv-start.err")"
    D=$(field "$drv-start" datadir | sed 's/ .*//')
    PID=$(field "$drv-start" server | sed -n 's/.*(pid \([0-9]*\)).*/\1/p')
    DATADIRS+=("$D")
    is "$(owner "${PID:-0}")" "$USR" "$drv: the server process runs as $USR"
    is "$(stat -c %U "$D" 2>/dev/null)" "$USR" "$drv: the datadir belongs to $USR"
    if [ "$drv" = mysql ]; then
        conn=(--db-driver=mysql --mysql-socket="$D/mysql.sock")
    else
        conn=(--db-driver=pgsql --pgsql-host="$D" --pgsql-port="$(field "$drv-start" port | sed 's/.*://')")
    fi
    run "$drv-prep" bench oltp_read_write prepare "${conn[@]}" --table-size=500
    is "$RC" 0 "$drv prepare as $USR: exit 0" || diag "$(<"$TMP/$drv-prep.err")"
    run "$drv-run" bench oltp_read_write run "${conn[@]}" --table-size=500 --time=1
    is "$RC" 0 "$drv run as $USR: exit 0" || diag "$(<"$TMP/$drv-run.err")"
    final_vars "$TMP/$drv-run.out"
    cmp_ok "${F_transactions:-0}" '>' 0 "$drv run as $USR: transactions ($F_transactions)"
    run "$drv-stop" server stop --datadir="$D"
    is "$RC" 0 "$drv stop as $USR: exit 0" || diag "$(<"$TMP/$drv-stop.err")"
    like "$(field "$drv-stop" stopped)" "clean shutdown$" "$drv stop: a clean shutdown"
    ok "$drv stop: the generated datadir is removed" test ! -e "$D"
done

note "---- a managed compare as $USR"
run cmp compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" --bench=oltp_point_select \
    --rounds=2 --threads=1 --time=1 --table-size=500 --results="$HOME_DIR/r.db" --workdir="$WD"
is "$RC" 0 "compare as $USR: exit 0" || diag "$(tail -5 "$TMP/cmp.err")"
like "$(<"$TMP/cmp.out")" "Table 1\. Transactions per second, oltp_point_select" "compare as $USR: the report"
is "$(sq "$HOME_DIR/r.db" "SELECT count(*) FROM runs WHERE tps > 0")" 4 "compare as $USR: 4 runs recorded"
ok "compare as $USR: work directory removed" test ! -e "$WD"
left=0
for d in "${DATADIRS[@]}" "$WD"; do
    left=$((left + $(pgrep -f -- "(mariadbd|postgres).*$d" | wc -l)))
done
is "$left" 0 "no server of this test left running"

done_testing
