#!/usr/bin/env bash
# Process and resource faults around `pgolab compare` on SQLite (store_resume.t covers SIGINT
# between runs; this adds the rest): the results database on a read-only file system (one line
# at start, nothing measured; report and history still read it); the disk filling up while
# results are written (a clear error naming the run and the way on, the runs before it kept,
# the file not corrupted, `--resume` finishes the grid) and during prepare (the workdir on a
# full tmpfs: one error naming the prepare, nothing half-recorded); SIGTERM during the first
# run's prepare and in the middle of a later run, each followed by --resume (the recorded runs
# equal the plan: no run lost, none twice); two compares writing one results database at once
# (both complete, distinct ids). The tmpfs mounts are made here (root) and unmounted at exit.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
[ "$(id -u)" = 0 ] || bail_out "mounting the test's tmpfs needs root (run the e2e tests as root, as CI does)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
V=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
C=(--bench=oltp_point_select --threads=1 --time=1 --table-size=100 --rand-seed=7)
keys="SELECT variant_idx || '/' || round FROM runs"
# grid ROUNDS: the (variant, round) keys of a complete experiment, sorted
grid() { for v in 0 1; do for r in $(seq 1 "$1"); do echo "$v/$r"; done; done | sort; }
mounts=()
_faults_cleanup() {
    for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
    rm -rf "$TMP"
}
on_exit _faults_cleanup
# tmpfs DIR SIZE: a private tmpfs at DIR, unmounted at exit
tmpfs() {
    mkdir -p "$1" && mount -t tmpfs -o "size=$2,mode=0700" tmpfs "$1" && mounts+=("$1") ||
        bail_out "cannot mount a tmpfs at $1"
}
# cmp NAME ARGS...: `pgolab compare` capped at 120 s; NAME.out, NAME.err, $RC
cmp() {
    local name=$1
    shift
    timeout 120 "$PGOLAB" compare "${V[@]}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
# wait_runs DB N: until DB holds N runs (at most 30 s)
wait_runs() {
    for _ in $(seq 1 300); do
        [ "$(sq "$1" "SELECT count(*) FROM runs" 2>/dev/null)" -ge "$2" ] 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
# consistent DB EXP ROUNDS DESC: integrity ok, the experiment complete with exactly the grid
consistent() {
    is "$(sq "$1" "PRAGMA integrity_check")" ok "$4: integrity_check ok"
    is "$(sq "$1" "SELECT status FROM experiments WHERE id = $2")" complete "$4: status complete"
    is "$(sq "$1" "$keys WHERE experiment_id = $2 ORDER BY 1")" "$(grid "$3")" \
        "$4: exactly the planned runs, none lost, none twice"
    timeout 30 "$PGOLAB" report --results="$1" --experiment="$2" >"$TMP/rep.out" 2>"$TMP/rep.err"
    is "$?" 0 "$4: pgolab report reads it"
    unlike "$(<"$TMP/rep.out")" "INCOMPLETE" "$4: the report covers every run"
}
start=$(date +%s)

# ---- 1. the results database on a read-only file system
RO=$TMP/ro
tmpfs "$RO" 4m
cmp ro0 "${C[@]}" --rounds=1 --results="$RO/r.db"
is "$RC" 0 "a compare recorded on the tmpfs while writable"
mount -o remount,ro "$RO" || bail_out "cannot remount $RO read-only"
cmp ro1 "${C[@]}" --rounds=1 --results="$RO/r.db"
is "$RC" 1 "read-only results file: exit 1"
is "$(<"$TMP/ro1.err")" "FATAL: results file $RO/r.db: cannot record there: $RO/r.db: Read-only file system (--results=FILE names a writable file)" \
    "read-only results file: one line naming the file and why"
is "$(<"$TMP/ro1.out")" "" "read-only results file: refused at start, nothing measured, no report"
cmp ro2 "${C[@]}" --rounds=1 --results="$RO/new.db"
is "$RC/$(<"$TMP/ro2.err")" "1/FATAL: results file $RO/new.db: cannot record there: $RO: Read-only file system (--results=FILE names a writable file)" \
    "a new results file in a read-only directory: exit 1, one line naming the directory"
timeout 30 "$PGOLAB" report --results="$RO/r.db" >"$TMP/ror.out" 2>"$TMP/ror.err"
is "$?" 0 "pgolab report reads a results file on a read-only file system"
like "$(head -1 "$TMP/ror.out")" "^pgolab experiment 1 \(compare\):" "... and shows its experiment"
timeout 30 "$PGOLAB" history --results="$RO/r.db" >"$TMP/roh.out" 2>&1
like "$(<"$TMP/roh.out")" " 1  .*compare  complete  A,B +oltp_point_select  2/2" "pgolab history reads it too"

# ---- 2. the disk fills up while results are written
FULL=$TMP/full
tmpfs "$FULL" 2m
timeout 120 "$PGOLAB" compare "${V[@]}" "${C[@]}" --rounds=3 --results="$FULL/r.db" >"$TMP/f1.out" 2>"$TMP/f1.err" &
pid=$!
wait_runs "$FULL/r.db" 2 || diag "the compare did not record 2 runs in 30 s"
dd if=/dev/zero of="$FULL/fill" bs=64k 2>/dev/null   # until ENOSPC
wait $pid
RC=$?
is "$RC" 1 "disk full while recording: exit 1"
like "$(<"$TMP/f1.err")" "FATAL: results file $FULL/r\.db: commit: database or disk is full" \
    "disk full: SQLite's own words, naming the results file"
like "$(<"$TMP/f1.err")" "FATAL: run [0-9]+ \([AB], oltp_point_select, threads=1, round [0-9]/3\) could not be recorded; stopping \(the runs recorded before it are kept: --resume=1 runs the rest once the results file can be written\)" \
    "disk full: names the run that was lost and the way on"
kept=$(sq "$FULL/r.db" "SELECT count(*) FROM runs")
cmp_ok "$kept" '>=' 2 "disk full: the runs recorded before it are kept ($kept)"
is "$(sq "$FULL/r.db" "PRAGMA integrity_check")" ok "disk full: the results file is not corrupted"
timeout 30 "$PGOLAB" report --results="$FULL/r.db" >"$TMP/fr.out" 2>/dev/null
is "$?" 0 "disk full: pgolab report still reads it (the disk still full)"
like "$(<"$TMP/fr.out")" "INCOMPLETE: $kept of 6 runs finished" "disk full: the report says what is missing"
rm -f "$FULL/fill"
cmp f2 "${C[@]}" --rounds=3 --results="$FULL/r.db" --resume=1
is "$RC" 0 "disk full, space freed: --resume=1 exits 0"
consistent "$FULL/r.db" 1 3 "disk full then resumed"

# ---- 3. the disk fills up during prepare (the workdir on a 1 MB tmpfs)
WD=$TMP/wd
tmpfs "$WD" 1m
cmp p1 --bench=oltp_point_select --threads=1 --time=1 --table-size=20000 --rounds=1 \
    --results="$TMP/p.db" --workdir="$WD/w"
is "$RC" 1 "disk full during prepare: exit 1"
like "$(<"$TMP/p1.err")" "^FATAL: prepare of oltp_point_select with A failed \(exit 1\): .*INSERT INTO sbtest1.* failed: database or disk is full \(code 13\)$" \
    "disk full during prepare: one error naming the prepare and SQLite's words"
like "$(<"$TMP/p1.err")" "experiment 1 removed from $TMP/p\.db: it failed before its first run" \
    "disk full during prepare: nothing half-recorded"
is "$(sq "$TMP/p.db" "PRAGMA integrity_check; SELECT count(*) FROM experiments")" "ok
0" "disk full during prepare: the results file is intact and empty"
is "$(ls -A "$WD")" "" "disk full during prepare: its workdir is removed"

# pgolab_of PID: the pgolab that `timeout` (PID) runs, to signal pgolab itself (a SIGTERM to
# timeout goes to its whole process group, and timeout can then die of it: exit 143)
pgolab_of() { pgrep -P "$1" -x pgolab || echo "$1"; }

# ---- 4. SIGTERM during the first prepare, then in the middle of a later run; --resume each
DB=$TMP/t.db
timeout 120 "$PGOLAB" compare "${V[@]}" "${C[@]}" --rounds=2 --results="$DB" >"$TMP/t1.out" 2>"$TMP/t1.err" &
pid=$!
for _ in $(seq 1 100); do [ -n "$(sq "$DB" "SELECT id FROM experiments" 2>/dev/null)" ] && break; sleep 0.05; done
poll 200 0.01 catches "$(pgolab_of $pid)" 15  # pgolab records the experiment a moment before it catches signals
kill -TERM "$(pgolab_of $pid)"
wait $pid
is "$?" 2 "SIGTERM during prepare: exit 2"
# (the 100-row prepare is quick: the signal lands in it or in the first run, said either way)
like "$(<"$TMP/t1.err")" "FATAL: interrupted by SIGTERM (while preparing oltp_point_select|during run 1 \([AB], oltp_point_select, threads=1, round 1/2\); no run had finished)" \
    "SIGTERM during prepare: says so" || diag "$(<"$TMP/t1.err")"
is "$(sq "$DB" "SELECT status || ' ' || (SELECT count(*) FROM runs) FROM experiments")" "interrupted 0" \
    "SIGTERM during prepare: interrupted, no run"
timeout 120 "$PGOLAB" compare "${V[@]}" "${C[@]}" --rounds=2 --results="$DB" --resume=1 >"$TMP/t2.out" 2>"$TMP/t2.err" &
pid=$!  # timeout passes the signal on to pgolab
wait_runs "$DB" 2
kill -TERM "$(pgolab_of $pid)"  # at once: in the third run, or just before it
wait $pid
is "$?" 2 "resumed, then SIGTERM mid-run: exit 2"
mid=$(sq "$DB" "SELECT count(*) FROM runs")
cmp_ok "$mid" '<' 4 "SIGTERM mid-run: stopped early ($mid of 4 runs)"
is "$(sq "$DB" "SELECT status FROM experiments")" interrupted "SIGTERM mid-run: interrupted"
cmp t3 "${C[@]}" --rounds=2 --results="$DB" --resume=1
is "$RC" 0 "second resume: exit 0"
consistent "$DB" 1 2 "SIGTERM twice, resumed twice"

# ---- 5. two compares writing one results database at once
SH=$TMP/shared.db
timeout 120 "$PGOLAB" compare "${V[@]}" "${C[@]}" --rounds=2 --results="$SH" >"$TMP/s1.out" 2>"$TMP/s1.err" &
p1=$!
timeout 120 "$PGOLAB" compare "${V[@]}" "${C[@]}" --rounds=2 --results="$SH" >"$TMP/s2.out" 2>"$TMP/s2.err" &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
is "$r1/$r2" 0/0 "two compares on one results file at once: both exit 0"
is "$(sq "$SH" "SELECT group_concat(id) FROM (SELECT id FROM experiments ORDER BY id)")" "1,2" \
    "... two experiments, distinct ids"
is "$(cat "$TMP/s1.err" "$TMP/s2.err" | grep -c '^experiment [12] recorded in ')" 2 "... each said its own id"
consistent "$SH" 1 2 "concurrent experiment 1"
consistent "$SH" 2 2 "concurrent experiment 2"
is "$(sq "$SH" "SELECT count(DISTINCT id) FROM runs")" 8 "... 8 runs, distinct run ids"

note "faults_process: $(($(date +%s) - start)) s"
done_testing
