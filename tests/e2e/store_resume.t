#!/usr/bin/env bash
# --resume: a compare interrupted by SIGINT after a few runs keeps them (status interrupted);
# resuming with changed settings or of an unknown experiment is refused in one line; the real
# resume runs only what is missing and ends with exactly the full grid of (variant, workload,
# threads, round), no duplicates, the earlier runs untouched, in the same order as an
# uninterrupted experiment with the same seed; resuming a complete experiment is refused.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
common=(--bench=oltp_point_select --threads=1,2 --rounds=2 --time=1 --table-size=1000 --rand-seed=7)
DB=$TMP/r.db
keys="SELECT variant_idx || '/' || workload || '/' || threads || '/' || round FROM runs"

# The grid every finished experiment must hold: 2 variants x 1 workload x 2 thread counts x
# 2 rounds.
grid=$(for v in 0 1; do for t in 1 2; do for r in 1 2; do echo "$v/oltp_point_select/$t/$r"; done; done; done | sort)

# ---- 1. an uninterrupted experiment, for the run order
timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" >"$TMP/full.out" 2>"$TMP/full.err"
is "$?" 0 "uninterrupted compare: exit 0"
is "$(sq "$DB" "$keys WHERE experiment_id = 1 ORDER BY 1")" "$grid" "uninterrupted: the full grid"

# ---- 2. the same experiment, interrupted by SIGINT once 3 runs are recorded
timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
for _ in $(seq 1 300); do
    n=$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 2" 2>/dev/null)
    [ "${n:-0}" -ge 3 ] && break
    sleep 0.1
done
kill -INT $pid
wait $pid
is "$?" 2 "interrupted compare: exit 2"
is "$(head -1 "$TMP/int.err")" "experiment 2 recorded in $DB" "interrupted compare: said its id first"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 2")" interrupted "status interrupted"
before=$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 2")
cmp_ok "$before" '>=' 3 "the runs finished before Ctrl-C are recorded ($before)"
cmp_ok "$before" '<' 8 "it did stop early"
kept=$(sq "$DB" "SELECT id || ' ' || started_at || ' ' || tps FROM runs WHERE experiment_id = 2 ORDER BY id")
kept_ids=$(sq "$DB" "SELECT group_concat(id) FROM runs WHERE experiment_id = 2")
like "$(<"$TMP/int.out")" "INCOMPLETE: $before of 8 runs finished" "its report says INCOMPLETE"

# ---- 3. refused resumes change nothing
refused() {
    local desc=$1 re=$2
    shift 2
    timeout 60 "$PGOLAB" compare "$@" --results="$DB" >"$TMP/ref.out" 2>"$TMP/ref.err"
    is "$?" 1 "$desc: exit 1"
    like "$(<"$TMP/ref.err")" "$re" "$desc: message"
    is "$(wc -l <"$TMP/ref.err" | tr -d ' ')" 1 "$desc: one line"
}
changed=(--bench=oltp_point_select --threads=1,2 --rounds=3 --time=1 --table-size=1000 --rand-seed=7)
refused "resume with --rounds=3" "cannot resume experiment 2: --rounds=3 differs from its recorded --rounds=2 \(leave --rounds out to continue with the recorded settings\)$" \
    "${vars[@]}" "${changed[@]}" --resume=2
cp "$TMP/libcopy.so" "$TMP/libother.so"
printf '\0' >>"$TMP/libother.so"
refused "resume with another library for B" "cannot resume experiment 2: --variant A=sqlite:.* --variant B=sqlite:.*libother\.so differs from its recorded --variant A=sqlite:.* --variant B=sqlite:.*libcopy\.so " \
    --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libother.so" "${common[@]}" --resume=2
# the same path with other contents: the options agree, the recorded fingerprint does not
cp "$TMP/libcopy.so" "$TMP/libcopy.keep"
printf '\0' >>"$TMP/libcopy.so"
refused "resume with B's library changed in place" "settings differ .*variant\.B: \{.*sha256" \
    "${vars[@]}" "${common[@]}" --resume=2
mv "$TMP/libcopy.keep" "$TMP/libcopy.so"
refused "resume of experiment 42" "^FATAL: no experiment 42 in .*r\.db; it has experiments? [0-9]+([-, ]+[0-9]+)* \(see pgolab history\)$" \
    "${vars[@]}" "${common[@]}" --resume=42
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 2")" "$before" "refused resumes ran nothing"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 2")" interrupted "... and left the status alone"

# ---- 4. the resume
timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" --resume=2 >"$TMP/res.out" 2>"$TMP/res.err"
is "$?" 0 "resume: exit 0"
is "$(head -1 "$TMP/res.err")" "resuming experiment 2 in $DB: $before of 8 runs recorded" "resume: says what it continues"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 2")" complete "resume: status complete"
is "$(sq "$DB" "$keys WHERE experiment_id = 2 ORDER BY 1")" "$grid" "resumed: exactly the full grid"
is "$(sq "$DB" "SELECT count(*) - count(DISTINCT variant_idx || '/' || workload || '/' || threads || '/' || round)
               FROM runs WHERE experiment_id = 2")" 0 "resumed: no duplicates"
is "$(sq "$DB" "SELECT id || ' ' || started_at || ' ' || tps FROM runs WHERE id IN ($kept_ids) ORDER BY id")" "$kept" \
    "resumed: the runs from before the interruption are kept, not redone"
is "$(sq "$DB" "$keys WHERE experiment_id = 2 ORDER BY seq")" "$(sq "$DB" "$keys WHERE experiment_id = 1 ORDER BY seq")" \
    "resumed: same run order as the uninterrupted experiment (same seed, per-round shuffle)"
unlike "$(<"$TMP/res.out")" "INCOMPLETE" "resumed: the report covers every run"
like "$(head -1 "$TMP/res.out")" "^pgolab experiment 2 \(compare\):" "resumed: the report names experiment 2"

# ---- 5. nothing left to resume
refused "resume of a complete experiment" "^FATAL: experiment 2 is complete; nothing to resume$" \
    "${vars[@]}" "${common[@]}" --resume=2
"$PGOLAB" history --results="$DB" >"$TMP/h.out"
is "$(grep -cE "  compare  complete  A,B +oltp_point_select  8/8$" "$TMP/h.out")" 2 "history: both experiments complete, 8/8"
done_testing
