#!/usr/bin/env bash
# `--resume=ID --results=FILE` alone continues an experiment with the settings it recorded:
# a SQLite compare with settings other than the defaults (workload, threads, rounds, time,
# tables, table size, reset, seed) is interrupted by SIGINT; its message
# gives the exact command to continue it; an option given again that disagrees is refused in
# one line naming the option, the recorded value and the given one, running nothing; then
# that exact command, typed as printed, completes the missing runs with the recorded
# settings (the store's settings text unchanged, exactly the full grid, the earlier runs
# kept); a given option that agrees is accepted.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
DB=$TMP/ctrlc.db
started=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so"
    --bench=oltp_point_select --threads=1,2 --rounds=3 --time=1 --tables=2 --table-size=500
    --reset=round --rand-seed=11)
keys="SELECT variant_idx || '/' || workload || '/' || threads || '/' || round FROM runs WHERE experiment_id = 1"
grid=$(for v in 0 1; do for t in 1 2; do for r in 1 2 3; do echo "$v/oltp_point_select/$t/$r"; done; done; done | sort)

# ---- 1. started with its settings, interrupted once two runs are recorded
timeout 120 "$PGOLAB" compare "${started[@]}" --results="$DB" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
for _ in $(seq 1 600); do
    n=$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 1" 2>/dev/null)
    [ "${n:-0}" -ge 2 ] && break
    sleep 0.1
done
kill -INT $pid
wait $pid
is "$?" 2 "interrupted compare: exit 2"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 1")" interrupted "status interrupted"
settings=$(sq "$DB" "SELECT settings_json FROM experiments WHERE id = 1")
before=$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 1")
kept=$(sq "$DB" "SELECT id || ' ' || started_at || ' ' || tps FROM runs WHERE experiment_id = 1 ORDER BY id")

# ---- 2. the interrupted message is the exact command
line=$(grep '^experiment 1 interrupted: ' "$TMP/int.err")
is "$line" "experiment 1 interrupted: \`pgolab compare --resume=1 --results=$DB\` continues it (with the settings it recorded)" \
    "interrupted: prints the exact command to continue"
unlike "$(<"$TMP/int.err")" "same options" "interrupted: no 'with the same options'"
cmd=$(printf '%s\n' "$line" | sed -n 's/^experiment 1 interrupted: `pgolab \(.*\)` continues it.*$/\1/p')

# ---- 3. a disagreeing option is refused in one line naming both values; nothing runs
refused() {
    local desc=$1 want=$2
    shift 2
    timeout 60 "$PGOLAB" compare --resume=1 --results="$DB" "$@" >"$TMP/ref.out" 2>"$TMP/ref.err"
    is "$?" 1 "$desc: exit 1"
    is "$(<"$TMP/ref.err")" "$want" "$desc: one line naming the option, recorded and given values"
}
leave="to continue with the recorded settings)"
refused "--time=2" "FATAL: cannot resume experiment 1: --time=2 differs from its recorded --time=1 (leave --time out $leave" --time=2
refused "--threads=1" "FATAL: cannot resume experiment 1: --threads=1 differs from its recorded --threads=1,2 (leave --threads out $leave" --threads=1
refused "--table-size=1000" "FATAL: cannot resume experiment 1: --table-size=1000 differs from its recorded --table-size=500 (leave --table-size out $leave" --table-size=1000
refused "--bench=oltp_read_only" "FATAL: cannot resume experiment 1: --bench=oltp_read_only differs from its recorded --bench=oltp_point_select (leave --bench out $leave" --bench=oltp_read_only
refused "--rand-seed=12" "FATAL: cannot resume experiment 1: --rand-seed=12 differs from its recorded --rand-seed=11 (leave --rand-seed out $leave" --rand-seed=12
refused "variants swapped" "FATAL: cannot resume experiment 1: --variant B=sqlite:$TMP/libcopy.so --variant A=sqlite:$SYSLIB differs from its recorded --variant A=sqlite:$SYSLIB --variant B=sqlite:$TMP/libcopy.so (leave --variant out $leave" \
    --variant "B=sqlite:$TMP/libcopy.so" --variant "A=sqlite:$SYSLIB"
refused "--target-ci=5 (not recorded)" "FATAL: cannot resume experiment 1: --target-ci=5 differs from its recorded settings, which have no --target-ci (leave --target-ci out $leave" --target-ci=5
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 1")" "$before" "refused resumes ran nothing"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 1")" interrupted "... and left the status alone"

# ---- 3b. the same command again, without --resume, starts a new experiment and says how to
#      continue the unfinished one (on a copy: experiment 1 stays as it is)
cp "$DB" "$TMP/again.db"
timeout 120 "$PGOLAB" compare "${started[@]}" --results="$TMP/again.db" >"$TMP/again.out" 2>"$TMP/again.err" &
pid=$!
poll 600 0.1 grep -q '^note: experiment 1 ' "$TMP/again.err"
kill -INT $pid
wait $pid
is "$(grep '^note: ' "$TMP/again.err")" "note: experiment 1 in $TMP/again.db has these settings and did not finish ($before runs recorded); this one starts over (--resume=1 continues experiment 1 instead)" \
    "the same command again: a new experiment, and one line naming the unfinished one and --resume"
like "$(<"$TMP/again.err")" "^experiment 2 recorded in $TMP/again.db" "... which is experiment 2"

# ---- 4. the printed command alone completes the missing runs with the recorded settings
eval "set -- $cmd"
is "$*" "compare --resume=1 --results=$DB" "the command's words"
timeout 120 "$PGOLAB" "$@" >"$TMP/res.out" 2>"$TMP/res.err"
is "$?" 0 "--resume=1 --results=FILE alone: exit 0" || diag "$(tail -5 "$TMP/res.err")"
is "$(grep '^resuming' "$TMP/res.err")" "resuming experiment 1 in $DB: $before of 12 runs recorded" "says what it continues"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 1")" complete "status complete"
is "$(sq "$DB" "$keys ORDER BY 1")" "$grid" "exactly the full grid of the recorded variants, threads and rounds"
is "$(sq "$DB" "SELECT settings_json FROM experiments WHERE id = 1")" "$settings" "the recorded settings unchanged"
is "$(sq "$DB" "SELECT id || ' ' || started_at || ' ' || tps FROM runs WHERE experiment_id = 1 AND id IN (SELECT id FROM runs WHERE experiment_id = 1 ORDER BY id LIMIT $before) ORDER BY id")" "$kept" \
    "the runs from before the interruption are kept"
like "$(head -1 "$TMP/res.out")" "^pgolab experiment 1 \(compare\):" "the report names experiment 1"
unlike "$(<"$TMP/res.out")" "INCOMPLETE" "the report covers every run"
# the report's header: the recorded grid, time, data set and seed
like "$(head -1 "$TMP/res.out")" "threads 1, ?2, 3 rounds x 1 s per run" "the recorded threads, rounds and time"
like "$(<"$TMP/res.out")" "data: 2 tables x 500 rows.*\(seed 11\)" "the recorded tables, table size and seed"

# ---- 5. an option given again that agrees is accepted (here on a second interrupted one)
timeout 120 "$PGOLAB" compare "${started[@]}" --results="$DB" >"$TMP/int2.out" 2>"$TMP/int2.err" &
pid=$!
for _ in $(seq 1 600); do
    n=$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 2" 2>/dev/null)
    [ "${n:-0}" -ge 1 ] && break
    sleep 0.1
done
kill -INT $pid
wait $pid
is "$?" 2 "second compare interrupted: exit 2"
timeout 120 "$PGOLAB" compare --resume=2 --results="$DB" --threads=1,2 --time=1 --rounds=3 \
    --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so" >"$TMP/agree.out" 2>"$TMP/agree.err"
is "$?" 0 "agreeing options given again: exit 0" || diag "$(tail -3 "$TMP/agree.err")"
is "$(sq "$DB" "SELECT status || ' ' || (SELECT count(*) FROM runs WHERE experiment_id = 2) FROM experiments WHERE id = 2")" "complete 12" \
    "... and the experiment is complete"
done_testing
