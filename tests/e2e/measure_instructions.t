#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# `pgolab compare --measure=instructions`: the deterministic mode for noisy machines. An A/A
# run of the system libsqlite3 against a copy of itself under valgrind callgrind: exit 0, the
# report says it shows instructions per transaction (not time), the two variants agree within
# 1%, the two rounds of each variant count exactly the same instructions, the value is plausible, and it
# is recorded in the store (report_json "callgrind" and `pgolab report` again).
. "$(dirname "$0")/lib.sh"

# valgrind is a dependency (scripts/install-deps.sh installs it): missing is a failure.
have valgrind || bail_out "valgrind is not installed (run scripts/install-deps.sh)"

SYSLIB=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
[ -f "$SYSLIB" ] || SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")

# several client threads are refused in one line before anything starts or is recorded
"$PGOLAB" compare "${vars[@]}" --results="$TMP/refused.db" --bench=oltp_read_only \
    --threads=1,2 --measure=instructions --events=300 --workdir="$TMP/wd0" \
    >"$TMP/thr.out" 2>"$TMP/thr.err"
is "$?" 1 "--threads=1,2 with --measure=instructions: exit 1"
is "$(wc -l <"$TMP/thr.err")" 1 "... one line"
like "$(cat "$TMP/thr.err")" "--measure=instructions runs 1 client thread .*--threads=1" \
    "... saying why and what to give"
ok "... before anything is recorded" test ! -e "$TMP/refused.db"

timeout 900 "$PGOLAB" compare "${vars[@]}" --results="$TMP/results.db" --bench=oltp_read_only \
    --measure=instructions --events=300 --rounds=2 --table-size=1000 \
    --rand-seed=7 --workdir="$TMP/wd" >"$TMP/aa.out" 2>"$TMP/aa.err"
is "$?" 0 "A/A compare --measure=instructions: exit 0"
like "$(head -1 "$TMP/aa.out")" "300 events per run: INSTRUCTIONS per transaction \(valgrind callgrind\), not time" \
    "header: says it shows instructions, not time"
like "$(cat "$TMP/aa.out")" "Table 1\. Instructions per transaction \(callgrind; deterministic, not time\), oltp_read_only" \
    "the instruction table is there"
unlike "$(cat "$TMP/aa.out")" "Transactions per second|response time" "no tps or latency tables"
like "$(cat "$TMP/aa.out")" "Table 2\. Simulated I1 cache misses per transaction \(callgrind --cache-sim\), oltp_read_only" \
    "the simulated I1 misses table"
like "$(cat "$TMP/aa.out")" "Table 3\. Simulated branch mispredictions per transaction \(callgrind --branch-sim\), oltp_read_only" \
    "the simulated branch mispredictions table"
read -r i1 bm < <(sq "$TMP/results.db" "SELECT json_extract(report_json, '\$.callgrind.i1_misses_per_transaction') || ' ' ||
    json_extract(report_json, '\$.callgrind.branch_mispredicts_per_transaction') FROM runs LIMIT 1")
note "simulated per transaction: I1 misses $i1, branch mispredictions $bm"
cmp_ok "${bm%.*}" '>' 10 "plausible: more than 10 branch mispredictions per oltp_read_only transaction"
cmp_ok "${bm%.*}" '<' 100000 "plausible: fewer than 100,000 (instructions are ~800,000)"
ok "I1 misses per transaction are a number" awk -v x="$i1" 'BEGIN { exit !(x == x + 0) }'
like "$(cat "$TMP/aa.out")" "\| +1 \| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\|" "a 1-thread row with median (min-max)"
like "$(cat "$TMP/aa.out")" "repeatability: between the rounds of one variant .*identical: instr_per_txn" \
    "the header says which counters stayed identical between rounds (instructions do)"
like "$(cat "$TMP/aa.out")" "Table 6\. Estimated cycles per transaction \(Ir \+ 10 Bm \+ 10 L1m \+ 100 LLm" \
    "the estimated cycles table"
unlike "$(cat "$TMP/aa.out")" "\| +2 \|" "no 2-thread row"

# Every run's value, from the store (report_json keeps the callgrind counts).
vals=$(sq "$TMP/results.db" "SELECT variant_idx || ' ' || json_extract(report_json, '\$.callgrind.instructions_per_transaction') FROM runs ORDER BY variant_idx, round")
note "instructions per transaction (variant value):" "$vals"
n=$(printf '%s\n' "$vals" | grep -c .)
is "$n" 4 "4 runs recorded, each with callgrind.instructions_per_transaction"
read -r a1 a2 b1 b2 < <(printf '%s\n' "$vals" | awk '{ printf "%s ", $2 } END { print "" }')
spread() { awk -v x="$1" -v y="$2" 'BEGIN { d = x - y; if (d < 0) d = -d; printf "%.6f", d / (x < y ? x : y) * 100 }'; }
# Exactly repeatable: the two rounds of one library count the same instructions (integers,
# both children) and so give the same value.
counts() { sq "$TMP/results.db" "SELECT group_concat(c, ' ') FROM (SELECT json_extract(report_json, '\$.callgrind.instructions_small') || '/' ||
    json_extract(report_json, '\$.callgrind.instructions') AS c FROM runs WHERE variant_idx = $1 ORDER BY round)"; }
read -r ca1 ca2 < <(counts 0)
read -r cb1 cb2 < <(counts 1)
like "$ca1" '^[0-9]+/[0-9]+$' "A: the instruction counts of round 1 are recorded ($ca1)"
is "$ca2" "$ca1" "A: round 2 counts exactly the instructions of round 1 (N/5 and N events)"
is "$cb2" "$cb1" "B: round 2 counts exactly the instructions of round 1 (N/5 and N events)"
is "$a2" "$a1" "A: the two rounds' instructions per transaction are equal"
is "$b2" "$b1" "B: the two rounds' instructions per transaction are equal"
cmp_ok "$(spread "$a1" "$b1")" '<' 1 "A/A: the variants differ by less than 1% ($a1, $b1)"
cmp_ok "${a1%.*}" '>' 10000 "plausible: more than 10,000 instructions per oltp_read_only transaction"
cmp_ok "${a1%.*}" '<' 10000000 "plausible: fewer than 10,000,000 instructions per transaction"

# Read back from the store: the same table and the recorded settings.
timeout 60 "$PGOLAB" report --results="$TMP/results.db" --experiment=1 >"$TMP/rep.out" 2>"$TMP/rep.err"
is "$?" 0 "pgolab report --experiment=1: exit 0"
like "$(cat "$TMP/rep.out")" "Instructions per transaction \(callgrind; deterministic, not time\)" \
    "the stored experiment reports instructions again"
is "$(sq "$TMP/results.db" "SELECT json_extract(settings_json, '\$.measure') || ' ' || json_extract(settings_json, '\$.events') FROM experiments WHERE id = 1")" \
    "instructions 300" "settings record measure and events"

# report --compare of two instruction-mode experiments. Two rounds can never be significant,
# so experiment 2 is experiment 1 with its rounds recorded twice (4 rounds), and experiment 3
# is experiment 2 with B's counts raised by 10%, as a build that executes 10% more
# instructions would record them.
copy_exp() { # copy_exp FROM TO ROUND_OFFSET B_FACTOR: runs of FROM (rounds shifted) into TO
    sq "$TMP/results.db" "INSERT OR IGNORE INTO experiments (id, kind, created_at, finished_at, status,
            settings_json, settings_hash, environment_json, seed) SELECT $2, kind, created_at + $2,
            finished_at, status, json_set(settings_json, '\$.rounds', 4), settings_hash,
            environment_json, seed FROM experiments WHERE id = $1;
        INSERT OR IGNORE INTO variants SELECT $2, idx, name, library, sha256, version, source_id,
            compiler, cflags, fingerprint_json FROM variants WHERE experiment_id = $1;
        INSERT INTO runs (experiment_id, variant_idx, workload, threads, round, seq, started_at,
            duration_s, tps, qps, lat_min_ms, lat_avg_ms, lat_p95_ms, lat_max_ms, transactions,
            errors, report_json)
            SELECT $2, variant_idx, workload, threads, round + $3, seq + $3 * 10, started_at,
            duration_s, tps, qps, lat_min_ms, lat_avg_ms, lat_p95_ms, lat_max_ms, transactions,
            errors, CASE variant_idx WHEN 1 THEN json_set(report_json,
                '\$.callgrind.instructions_per_transaction',
                json_extract(report_json, '\$.callgrind.instructions_per_transaction') * $4)
            ELSE report_json END FROM runs WHERE experiment_id = $1"
}
copy_exp 1 2 0 1 && copy_exp 1 2 2 1 && copy_exp 2 3 0 1.1
is "$(sq "$TMP/results.db" "SELECT count(*) FROM runs WHERE experiment_id = 3")" 8 "experiment 3: 4 rounds x 2 variants"
timeout 60 "$PGOLAB" report --results="$TMP/results.db" --compare=2,3 >"$TMP/x.out" 2>"$TMP/x.err"
is "$?" 0 "report --compare=2,3 of instruction experiments: exit 0"
like "$(cat "$TMP/x.out")" "Table 1\. Instructions per transaction \(callgrind; deterministic, not time\)" \
    "--compare: the instructions table"
unlike "$(cat "$TMP/x.out")" "Transactions per second" "--compare: no tps table"
like "$(cat "$TMP/x.out")" "^\| +A \| oltp_read_only \| +1 \| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\| +~ +\|$" \
    "--compare: A unchanged (the same counts in both)"
like "$(cat "$TMP/x.out")" "^\| +B \| oltp_read_only \| +1 \| .* \| +-[0-9.]+% \(95% CI .*\) +\|$" \
    "--compare: B's 10% more instructions shown as a change with its CI"
timeout 60 "$PGOLAB" report --results="$TMP/results.db" --compare=2,3 --fail-if-slower=5 >/dev/null 2>"$TMP/f.err"
is "$?" 3 "--compare --fail-if-slower=5: B needs 10% more instructions: exit 3"
like "$(cat "$TMP/f.err")" "instructions per transaction" "... and names the metric"

"$PGOLAB" compare "${vars[@]}" --results="$TMP/results.db" --measure=cycles >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "--measure=cycles: exit 1"
like "$(cat "$TMP/bad.err")" "invalid --measure=cycles \(expected time or instructions\)" "--measure=cycles: says what is valid"

done_testing
