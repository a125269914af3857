#!/bin/bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# memcheck.t: a short multi-threaded `pgolab bench run` of each driver under valgrind memcheck:
# SQLite on a file, MariaDB and PostgreSQL on servers this test starts with `pgolab server
# start` (stopped at the end). The run exits 0 with transactions counted, and memcheck finds no
# error and no definite leak (--error-exitcode, --errors-for-leak-kinds=definite). prepare and
# cleanup run without valgrind (a run is where the threads and the drivers' hot paths are).
#
# PGOLAB_MEMCHECK=off runs the same sequence without valgrind: `make check-asan` and
# `make check-tsan` run this script that way on their instrumented binary (PGOLAB=...), where
# the sanitizer is the checker (tests/sanitizers.sh).
. "$(dirname "$0")/lib.sh"
on_exit srv_cleanup

MEMCHECK=()
if [ "${PGOLAB_MEMCHECK:-on}" != off ]; then
    have valgrind || bail_out "valgrind not installed (scripts/install-deps.sh installs it)"
    # exit 99 for an error or a definite leak; the log is kept for the diagnostics
    MEMCHECK=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
              --errors-for-leak-kinds=definite --show-leak-kinds=definite --track-origins=yes
              --num-callers=30 --log-file="$TMP/vg.%q{VGNAME}.log")
fi
[ -x /usr/sbin/mariadbd ] || bail_out "/usr/sbin/mariadbd missing (scripts/install-deps.sh installs mariadb-server)"
[ -x /usr/lib/postgresql/15/bin/postgres ] || bail_out "postgres missing (scripts/install-deps.sh installs postgresql)"
SERVER_ARGS_RE='(--datadir=|postgres -D )'  # for srv_cleanup's no_server_in (lib.sh)
# valgrind makes pgolab about 20-50 times slower: the run is 2 s of load, the cap generous
E2E_CMD_TIMEOUT=180
WL=(oltp_read_write --tables=2 --table-size=500)

# checked NAME DRIVER-ARGS...: 4 checks: `pgolab bench ... run` of WL with 2 threads for 2 s
# (under memcheck unless off) exits 0, counts transactions, and memcheck reported nothing
checked() {
    local name=$1 log
    shift
    timeout -k 5 60 "$PGOLAB" bench "${WL[@]}" "$@" prepare >"$TMP/$name-prep.out" 2>&1
    is "$?" 0 "$name: prepare (not under valgrind)" || diag "$(tail -5 "$TMP/$name-prep.out")"
    VGNAME=$name timeout -k 5 "$E2E_CMD_TIMEOUT" "${MEMCHECK[@]}" "$PGOLAB" bench "${WL[@]}" "$@" \
        --threads=2 --time=2 run >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
    log=$TMP/vg.$name.log
    is "$RC" 0 "$name: bench run ${MEMCHECK:+under memcheck }exits 0 (99: memcheck found an error)" ||
        diag "$(tail -5 "$TMP/$name.err")" "$( [ -f "$log" ] && grep -A30 -m1 '^==[0-9]*== [A-Z][a-z]' "$log")"
    final_vars "$TMP/$name.out"
    cmp_ok "${F_transactions:-0}" '>' 0 "$name: transactions were counted ($F_transactions)"
    if [ ${#MEMCHECK[@]} -gt 0 ]; then
        like "$(cat "$log" 2>/dev/null)" 'ERROR SUMMARY: 0 errors from 0 contexts' \
            "$name: memcheck: 0 errors, no definite leak" ||
            diag "$(grep -E 'definitely lost|ERROR SUMMARY|Invalid|uninitialised' "$log" | head -20)"
    else
        skip_anywhere 1 "$name: memcheck off (PGOLAB_MEMCHECK=off: the sanitizer build checks instead)"
    fi
    timeout -k 5 60 "$PGOLAB" bench "${WL[@]}" "$@" cleanup >"$TMP/$name-clean.out" 2>&1
    is "$?" 0 "$name: cleanup"
}

note "---- SQLite"
checked sqlite --db-driver=sqlite --sqlite-db="$TMP/mc.db"

for drv in mysql pgsql; do
    note "---- $drv: a server started with pgolab server start"
    srv "start-$drv" start --db-driver="$drv"
    started "start-$drv"
    client=$(field "start-$drv" client)
    if ! is "$RC" 0 "$drv: pgolab server start" || [ -z "$client" ]; then
        diag "$(tail -40 "$TMP/start-$drv.err")"
        continue  # never bench with the default connection options: another server may be there
    fi
    # shellcheck disable=SC2086  # the printed client options are separate words
    checked "$drv" $client
    srv "stop-$drv" stop --datadir="$D"
    is "$RC" 0 "$drv: pgolab server stop"
done

done_testing
