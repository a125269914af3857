#!/bin/bash
# bench_mpi.t: `mpirun -np N pgolab bench ... run` as one job of N client processes on this
# host (Open MPI, --oversubscribe), on SQLite and against a MariaDB and a PostgreSQL server
# started with `pgolab server start` on loopback. prepare runs once (rank 0); the merged
# counts equal the sum of the per-rank counts in the JSON; the merged latency histogram
# equals the histogram of every rank's raw latencies (the PGOLAB_LATENCY_FILE test knob
# writes them; the check recomputes the buckets, min, max and the percentiles from the
# samples); rank 0's text has the layout of a single-process run; ranks given different
# options are refused with the first difference; a rank that cannot reach the database, a rank
# whose run fails and a rank killed mid-run each stop every rank, with that rank's message; a
# build without MPI (build/pgolab-nompi) refuses to run under mpirun with 2 ranks.
# Every run is bounded by --time and `timeout`.
. "$(dirname "$0")/lib.sh"

have mpirun || bail_out "needs mpirun (scripts/install-deps.sh installs openmpi-bin and libopenmpi-dev)"
ldd "$PGOLAB" | grep -q libmpi ||
    bail_out "$PGOLAB was built without MPI (install libopenmpi-dev, then make clean pgolab)"
have mariadbd || bail_out "needs mariadbd (scripts/install-deps.sh installs mariadb-server)"
have psql || bail_out "needs psql (scripts/install-deps.sh installs postgresql)"
E2E_CMD_TIMEOUT=60

SD=$(mktemp -d /dev/shm/pgolab-mpi.XXXXXX) || bail_out "mktemp in /dev/shm failed"
chmod 0711 "$SD"   # PostgreSQL runs as the postgres user
mpi_cleanup() {
    local d
    for d in pg my; do
        [ -e "$SD/$d" ] && timeout 60 "$PGOLAB" server stop --datadir="$SD/$d" >/dev/null 2>&1
    done
    rm -rf "$SD"
    _e2e_cleanup
}
on_exit mpi_cleanup

# mpi NAME NP ARGS...: `mpirun -np NP pgolab bench ARGS`; stdout in $TMP/NAME.out, stderr in
# $TMP/NAME.err, exit status in $RC. Every rank writes its latencies to $TMP/NAME.lat.RANK.
mpi() {
    local name=$1 np=$2
    shift 2
    PGOLAB_LATENCY_FILE="$TMP/$name.lat" timeout -k 5 "$E2E_CMD_TIMEOUT" \
        mpirun --oversubscribe --allow-run-as-root -x PGOLAB_LATENCY_FILE -np "$np" \
        "$PGOLAB" bench "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
    [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ] && diag "mpirun -np $np pgolab bench $* timed out"
    return 0
}

CHECK="$E2E_DIR/mpi_merge_check.pl"

# merged NAME NP ARGS...: a JSON run of NP ranks, and its checks
merged() {
    local name=$1 np=$2
    shift 2
    mpi "$name" "$np" "$@" --format=json run
    is "$RC" 0 "$name: $np ranks run (exit 0)" || diag "$(tail -5 "$TMP/$name.err")"
    is "$(perl "$CHECK" "$TMP/$name.out" "$TMP/$name.lat" "$np" 2>&1)" ok \
        "$name: counts are the sum of the $np ranks', the histogram and percentiles those of every sample"
    is "$(jq '.threads' "$TMP/$name.out" 2>&1)" "$((np * 2))" "$name: threads are the job's ($np ranks x 2)"
}

# ---- SQLite
SQ=(--db-driver=sqlite --sqlite-db="$TMP/sb.db" --tables=2 --table-size=500)
mpi sqprep 2 "${SQ[@]}" oltp_read_write prepare
is "$RC" 0 "sqlite: prepare under 2 ranks (exit 0)" || diag "$(<"$TMP/sqprep.err")"
is "$(grep -c "^Creating table 'sbtest1'" "$TMP/sqprep.out")" 1 "sqlite: prepare ran once (rank 0)"
is "$(sq "$TMP/sb.db" 'select count(*) from sbtest2')" 500 "sqlite: the tables are there"
for np in 2 4; do
    merged "sq$np" "$np" "${SQ[@]}" --threads=2 --time=2 --rand-seed=11 oltp_read_write
done
# --events holds for the whole job: split over the ranks
mpi sqev 4 "${SQ[@]}" --threads=2 --time=0 --events=403 --format=json oltp_read_only run
is "$RC" 0 "sqlite --events: 4 ranks run (exit 0)"
is "$(jq '.events' "$TMP/sqev.out")" 403 "--events=403 over 4 ranks: 403 events in all"
is "$(jq -c '[.ranks[].events]' "$TMP/sqev.out")" "[101,101,101,100]" "--events split 101/101/101/100"

# rank 0's text has a single process's layout (numbers aside)
shape() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g' "$1"; }
mpi sqtext 2 "${SQ[@]}" --threads=2 --time=3 --report-interval=1 --rand-seed=5 oltp_read_only run
is "$RC" 0 "sqlite text: 2 ranks run (exit 0)"
pg sqone "${SQ[@]}" --threads=4 --time=3 --report-interval=1 --rand-seed=5 oltp_read_only run
is "$(diff <(shape "$TMP/sqone.out") <(shape "$TMP/sqtext.out") 2>&1)" "" \
    "rank 0's text has the layout of a single-process run (line for line)"
is "$(grep -c '^\[ [0-9]*s \] thds: [0-9]* tps' "$TMP/sqtext.out")" 3 "one merged interval line per second"
like "$(grep -m1 '^\[ 1s \]' "$TMP/sqtext.out")" "thds: 4 tps" "the lines count both ranks' threads"

is "$(grep -c '^SQL statistics:' "$TMP/sqtext.out")" 1 "the final block once"
like "$(<"$TMP/sqtext.out")" "Number of threads: 4" "the header counts every rank's threads"

# bad input
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 1 "$PGOLAB" bench "${SQ[@]}" --time=1 \
    --threads=2 oltp_read_only run : -np 1 "$PGOLAB" bench "${SQ[@]}" --time=1 --threads=3 \
    oltp_read_only run >"$TMP/sqdiff.out" 2>"$TMP/sqdiff.err"
RC=$?
isnt "$RC" 0 "ranks given different options: refused (exit non-zero)"
like "$(<"$TMP/sqdiff.err")" "rank 1 of 2 was given other options than rank 0: '--threads=3' here, '--threads=2' on rank 0" \
    "the refusal names the first difference"
unlike "$(<"$TMP/sqdiff.out")" "Threads started" "nothing ran"
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 1 "$PGOLAB" bench "${SQ[@]}" --time=1 \
    --mysql-password=Secret-1 oltp_read_only run : -np 1 "$PGOLAB" bench "${SQ[@]}" --time=1 \
    --mysql-password=Secret-2 oltp_read_only run >"$TMP/sqpw.out" 2>"$TMP/sqpw.err"
RC=$?
isnt "$RC" 0 "ranks given different passwords: refused (exit non-zero)"
like "$(<"$TMP/sqpw.err")" "'--mysql-password=\(hidden\)' here, '--mysql-password=\(hidden\)' on rank 0" \
    "the refusal names the option"
unlike "$(cat "$TMP/sqpw.err" "$TMP/sqpw.out")" "Secret-" "and never the password"
mkdir -p "$TMP/a" "$TMP/b" && cp "$TMP/sb.db" "$TMP/a/sb.db"
REL=(--db-driver=sqlite --sqlite-db=sb.db --tables=2 --table-size=500 --time=2 oltp_read_only run)
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 1 -wdir "$TMP/a" "$PGOLAB" bench "${REL[@]}" \
    : -np 1 -wdir "$TMP/b" "$PGOLAB" bench "${REL[@]}" >"$TMP/sqreach.out" 2>"$TMP/sqreach.err"
RC=$?
isnt "$RC" 0 "a rank without the database file stops the job (exit non-zero)"
like "$(<"$TMP/sqreach.err")" "sqlite-db=sb.db does not exist" "with that rank's message"
like "$(<"$TMP/sqreach.err")" "rank 1 of 2 could not reach the server and its tables" "rank 0 names the rank"
unlike "$(<"$TMP/sqreach.out")" "Threads started" "no rank started"

# a pgolab built without MPI (the Makefile's build/pgolab-nompi: the stub, no libmpi) runs one
# process as before, and under mpirun with 2 ranks refuses in one line instead of running 2
# unrelated copies
NOMPI="$REPO_DIR/build/pgolab-nompi"
make -s -C "$REPO_DIR" build/pgolab-nompi >"$TMP/nompi-make.log" 2>&1 ||
    bail_out "make build/pgolab-nompi failed: $(tail -3 "$TMP/nompi-make.log")"
unlike "$(ldd "$NOMPI")" "libmpi" "build/pgolab-nompi does not link libmpi"
timeout 60 "$NOMPI" bench "${SQ[@]}" --threads=2 --events=50 --time=0 oltp_read_only run \
    >"$TMP/nompi1.out" 2>&1
is "$?" 0 "without MPI, one process runs as before (exit 0)"
final_vars "$TMP/nompi1.out"
is "$F_total_events" 50 "and does its 50 events"
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 2 "$NOMPI" bench "${SQ[@]}" --time=1 \
    oltp_read_only run >"$TMP/nompi.out" 2>"$TMP/nompi.err"
RC=$?
isnt "$RC" 0 "without MPI, under mpirun -np 2: refused (exit non-zero)"
is "$(grep -c 'built without MPI' "$TMP/nompi.err")" 1 "in one line, by rank 0 alone"
like "$(<"$TMP/nompi.err")" "started as one of 2 ranks by mpirun, but this pgolab was built without MPI: install libopenmpi-dev" \
    "saying what to install"
unlike "$(<"$TMP/nompi.out")" "Threads started" "no copy ran"

# a rank that dies mid-run (SIGKILL) ends the job: mpirun stops the others and names it
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 2 "$PGOLAB" bench "${SQ[@]}" --threads=2 \
    --time=40 --report-interval=1 oltp_read_only run >"$TMP/sqdie.out" 2>"$TMP/sqdie.err" &
MPIRUN=$!
victim=
for _ in $(seq 1 300); do  # rank 1, once the job runs (at most 30 s: mpirun starts slowly under load)
    if grep -q '^\[ 1s \]' "$TMP/sqdie.out" 2>/dev/null; then
        for p in $(pgrep -f "^$PGOLAB bench .*--sqlite-db=$TMP/sb.db"); do  # this file's ranks only
            grep -qz '^OMPI_COMM_WORLD_RANK=1$' "/proc/$p/environ" 2>/dev/null && victim=$p
        done
        break
    fi
    sleep 0.1
done
isnt "$victim" "" "rank 1's process found while the job runs"
SECONDS=0
[ -n "$victim" ] && kill -9 "$victim"
wait "$MPIRUN"
RC=$? T=$SECONDS
isnt "$RC" 0 "a rank killed mid-run ends the job (exit non-zero)"
cmp_ok "$T" "<" 30 "every rank stopped before --time=40 (after ${T}s)"
like "$(<"$TMP/sqdie.err")" "rank 1 .*(exited on signal 9|Killed)" "mpirun names the rank that died"

# Ctrl-C on mpirun (SIGINT to it): Open MPI sends the ranks SIGCONT, SIGTERM
# odls_base_sigkill_timeout s later and SIGKILL as long again after that; a rank takes the
# SIGTERM as SIGINT, the ranks stop and reduce, rank 0 prints the merged partial summary. The
# timeout is 5 s here (1 by default) so a loaded machine cannot race the SIGKILL. No
# `timeout` around mpirun: it signals its whole process group, the ranks included; a watchdog
# bounds the wait instead.
for thr in 1 2; do
    mpirun --oversubscribe --allow-run-as-root --mca odls_base_sigkill_timeout 5 \
        -np 2 "$PGOLAB" bench "${SQ[@]}" --threads=$thr --time=40 --report-interval=1 \
        oltp_read_only run >"$TMP/sqint$thr.out" 2>"$TMP/sqint$thr.err" &
    MPIRUN=$!
    watchdog 60 "$MPIRUN"
    poll 300 0.1 grep -q '^\[ 1s \]' "$TMP/sqint$thr.out"
    SECONDS=0
    kill -INT "$MPIRUN"
    wait "$MPIRUN"
    T=$SECONDS
    end_watchdog
    cmp_ok "$T" "<" 20 "Ctrl-C on mpirun, --threads=$thr: the job ends (after ${T}s)"
    ok "Ctrl-C on mpirun, --threads=$thr: rank 0 says it was interrupted" \
        grep -q "^Interrupted (mpirun's SIGTERM" "$TMP/sqint$thr.out"
    final_vars "$TMP/sqint$thr.out"
    cmp_ok "${F_transactions:-0}" ">" 0 "Ctrl-C on mpirun, --threads=$thr: the partial summary keeps the work done"
    cmp_ok "${F_total_time:-99}" "<" 30 "Ctrl-C on mpirun, --threads=$thr: total time ends at the signal (${F_total_time}s)"
    is "$(grep -c '^SQL statistics:' "$TMP/sqint$thr.out")" 1 "Ctrl-C on mpirun, --threads=$thr: one summary (rank 0's)"
    is "$(grep -o 'Number of threads: [0-9]*' "$TMP/sqint$thr.out")" "Number of threads: $((2 * thr))" \
        "Ctrl-C on mpirun, --threads=$thr: the summary is the whole job's"
done

# ---- MariaDB and PostgreSQL, started by pgolab on loopback
start() {
    local name=$1 drv=$2
    timeout 120 "$PGOLAB" server start --db-driver="$drv" --datadir="$SD/$name" >"$TMP/start-$name.out" 2>&1 ||
        bail_out "pgolab server start failed: $(tail -3 "$TMP/start-$name.out")"
    eval "PORT_$name=$(sed -n 's/^port: *127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/start-$name.out")"
}
start my mysql
start pg pgsql
MY=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT_my" --mysql-user=sbtest --mysql-db=sbtest)
PG=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PORT_pg" --pgsql-user=sbtest --pgsql-db=sbtest)
for srv in my pg; do
    declare -n ARGS=${srv^^}
    mpi "${srv}prep" 2 "${ARGS[@]}" --tables=2 --table-size=500 oltp_read_write prepare
    is "$RC" 0 "$srv: prepare under 2 ranks (exit 0)" || diag "$(<"$TMP/${srv}prep.err")"
    is "$(grep -c "^Creating table 'sbtest1'" "$TMP/${srv}prep.out")" 1 "$srv: prepare ran once (rank 0)"
    for np in 2 4; do
        merged "$srv$np" "$np" "${ARGS[@]}" --tables=2 --table-size=500 --threads=2 --time=2 oltp_read_write
    done
    mpi "${srv}clean" 2 "${ARGS[@]}" --tables=2 oltp_read_write cleanup
    is "$RC" 0 "$srv: cleanup under 2 ranks (exit 0)"
    is "$(grep -c "^Dropping table 'sbtest1'" "$TMP/${srv}clean.out")" 1 "$srv: cleanup ran once (rank 0)"
    unset -n ARGS
done
# a rank whose connections the server refuses (an unknown setting in its PGOPTIONS)
mpi pgprep2 1 "${PG[@]}" --table-size=100 oltp_read_write prepare
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 1 "$PGOLAB" bench "${PG[@]}" --time=2 \
    oltp_point_select run : -np 1 env PGOPTIONS="-c no_such_setting=1" "$PGOLAB" bench "${PG[@]}" \
    --time=2 oltp_point_select run >"$TMP/pgreach.out" 2>"$TMP/pgreach.err"
RC=$?
isnt "$RC" 0 "postgresql: a rank the server refuses stops the job (exit non-zero)"
like "$(<"$TMP/pgreach.err")" "no_such_setting" "with that rank's message"
like "$(<"$TMP/pgreach.err")" "rank 1 of 2 could not reach the server" "rank 0 names the rank"
unlike "$(<"$TMP/pgreach.out")" "Threads started" "no rank started"

# a rank whose run fails (its transactions are read-only: the first write is an error) stops
# every rank at once, long before --time
SECONDS=0
timeout -k 5 60 mpirun --oversubscribe --allow-run-as-root -np 1 "$PGOLAB" bench "${PG[@]}" --table-size=100 \
    --time=40 oltp_read_write run : -np 1 env PGOPTIONS="-c default_transaction_read_only=on" \
    "$PGOLAB" bench "${PG[@]}" --table-size=100 --time=40 oltp_read_write run >"$TMP/pgmid.out" 2>"$TMP/pgmid.err"
RC=$? T=$SECONDS
isnt "$RC" 0 "postgresql: a rank whose run fails stops the job (exit non-zero)"
cmp_ok "$T" "<" 30 "every rank stopped before --time=40 (after ${T}s)"
like "$(<"$TMP/pgmid.err")" "ERROR 25006: cannot execute UPDATE in a read-only transaction" "with that rank's error"
like "$(<"$TMP/pgmid.err")" "rank 1 of 2 \(host [^)]*\): its run failed \(the error above\): stopping every rank" \
    "and which rank stopped the job"

done_testing
