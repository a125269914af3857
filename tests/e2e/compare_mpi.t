#!/bin/bash
# compare_mpi.t: `pgolab compare --clients=mpirun:N`: each measured run's client side is one
# MPI job (`mpirun -np N pgolab bench ...`, on this host: --oversubscribe), while variants,
# rounds and the results database stay as they are. An A/A compare of the system SQLite on 2
# ranks: every recorded run is the merged job (its JSON lists 2 ranks whose events add up to
# the run's transactions; threads are the job's), the settings record "clients", the report
# header says so, also when rebuilt from the results database; the same for a managed PostgreSQL
# variant (2 ranks against each run's server). Bad input: a malformed value,
# --measure=instructions, a build without MPI (build/pgolab-nompi), no mpirun on PATH.
. "$(dirname "$0")/lib.sh"

have mpirun || bail_out "needs mpirun (scripts/install-deps.sh installs openmpi-bin and libopenmpi-dev)"
ldd "$PGOLAB" | grep -q libmpi ||
    bail_out "$PGOLAB was built without MPI (install libopenmpi-dev, then make clean pgolab)"
have sqlite3 || bail_out "needs sqlite3 (scripts/install-deps.sh installs it)"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
C=(--bench=oltp_point_select --threads=2 --rounds=2 --time=1 --table-size=500 --metrics=off)

timeout 300 "$PGOLAB" compare "${vars[@]}" "${C[@]}" --clients=mpirun:2 --results="$TMP/r.db" \
    --workdir="$TMP/wd" >"$TMP/aa.out" 2>"$TMP/aa.err"
is "$?" 0 "A/A compare with --clients=mpirun:2: exit 0" || diag "$(tail -5 "$TMP/aa.err")"
is "$(sq "$TMP/r.db" 'select count(*) from runs')" 4 "4 runs recorded (2 variants x 2 rounds)"
is "$(sq "$TMP/r.db" "select count(*) from runs where json_array_length(report_json, '\$.ranks') = 2")" 4 \
    "every recorded run is an MPI job of 2 ranks"
is "$(sq "$TMP/r.db" "select count(*) from runs where json_extract(report_json, '\$.threads') = 4 and threads = 2")" 4 \
    "the job ran 2 ranks x 2 threads (the cell's thread count is per rank)"
is "$(sq "$TMP/r.db" "select count(*) from runs r where transactions > 0 and transactions =
    (select sum(json_extract(value, '\$.events')) from json_each(r.report_json, '\$.ranks'))")" 4 \
    "each run's transactions are the sum of its ranks' events"
is "$(sq "$TMP/r.db" "select json_extract(settings_json, '\$.clients') from experiments")" "mpirun:2" \
    "the settings record --clients"
head='^  clients: each run is one MPI job of 2 ranks \(mpirun:2\), each with the thread count.s workers; the cells are the merged runs$'
like "$(<"$TMP/aa.out")" "$head" "the report header says so"
timeout 60 "$PGOLAB" report --results="$TMP/r.db" --experiment=1 >"$TMP/rep.out" 2>&1
like "$(<"$TMP/rep.out")" "$head" "and so does the report rebuilt from the results database"
ok "workdir removed at the end" test ! -e "$TMP/wd"

# a managed PostgreSQL variant (its server started for each run) driven by 2 ranks
PGBIN=/usr/lib/postgresql/15/bin
chmod o+x "$TMP"   # the workdir below it: PostgreSQL runs as the postgres user
[ -x "$PGBIN/postgres" ] || bail_out "needs $PGBIN/postgres (scripts/install-deps.sh installs postgresql)"
timeout 300 "$PGOLAB" compare --variant "A=pgsql:$PGBIN/postgres" --variant "B=pgsql:$PGBIN/postgres" \
    --bench=oltp_point_select --threads=1 --rounds=1 --time=1 --table-size=500 --clients=mpirun:2 \
    --results="$TMP/pg.db" --workdir="$TMP/pgwd" >"$TMP/pg.out" 2>"$TMP/pg.err"
is "$?" 0 "pgsql A/A with --clients=mpirun:2: exit 0" || diag "$(tail -5 "$TMP/pg.err")"
is "$(sq "$TMP/pg.db" "select count(*) from runs r where json_array_length(report_json, '\$.ranks') = 2
    and transactions > 0 and transactions =
    (select sum(json_extract(value, '\$.events')) from json_each(r.report_json, '\$.ranks'))")" 2 \
    "pgsql: both runs are 2-rank jobs whose transactions are the sum of the ranks' events"

# bad input: one line each, nothing run
refused() {  # refused NAME ERE DESC ARGS...: compare ARGS fails with ERE in one line
    local name=$1 ere=$2 desc=$3
    shift 3
    timeout 60 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    isnt "$?" 0 "$desc: refused (exit non-zero)"
    like "$(<"$TMP/$name.err")" "$ere" "$desc: says why"
    is "$(grep -c . "$TMP/$name.err")" 1 "$desc: in one line"
}
refused bad 'invalid --clients=mpirun:x \(expected mpirun:N or mpirun:N:HOSTFILE' "--clients=mpirun:x" \
    "$PGOLAB" compare "${vars[@]}" "${C[@]}" --clients=mpirun:x --results="$TMP/bad.db"
refused nofile "cannot read the hostfile $TMP/none" "a missing hostfile" \
    "$PGOLAB" compare "${vars[@]}" "${C[@]}" --clients="mpirun:2:$TMP/none" --results="$TMP/bad.db"
refused instr "--measure=instructions and --profile measure one" "--clients with --measure=instructions" \
    "$PGOLAB" compare "${vars[@]}" "${C[@]}" --clients=mpirun:2 --measure=instructions --results="$TMP/bad.db"
refused path "no mpirun on PATH" "no mpirun on PATH" \
    env PATH=/nonexistent "$PGOLAB" compare "${vars[@]}" "${C[@]}" --clients=mpirun:2 --results="$TMP/bad.db"
NOMPI="$REPO_DIR/build/pgolab-nompi"
make -s -C "$REPO_DIR" build/pgolab-nompi >"$TMP/nompi-make.log" 2>&1 ||
    bail_out "make build/pgolab-nompi failed: $(tail -3 "$TMP/nompi-make.log")"
refused nompi "needs a pgolab built with MPI: install libopenmpi-dev" "a build without MPI" \
    "$NOMPI" compare "${vars[@]}" "${C[@]}" --clients=mpirun:2 --results="$TMP/bad.db"
ok "nothing was recorded by the refused ones" test ! -s "$TMP/bad.db"

done_testing
