#!/usr/bin/env bash
# `pgolab compare` on SQLite builds a user already has: an A/A run of the system library against
# a copy of itself gives the seed-000 tables with every row, % improvement that is the change
# column's estimate, the verdict block last (the per-run trust table only with --trust-table)
# and a JSON file with every run;
# Ctrl-C midway keeps the finished runs in the JSON; bad --variant specs are one-line errors.
. "$(dirname "$0")/lib.sh"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")

timeout 300 "$PGOLAB" compare "${vars[@]}" --results="$TMP/results.db" --bench=oltp_point_select --threads=1,2 --rounds=2 --time=1 \
    --table-size=1000 --workdir="$TMP/wd" --output="$TMP/aa.json" >"$TMP/aa.out" 2>"$TMP/aa.err"
is "$?" 0 "A/A compare: exit 0"
for title in "Transactions per second" "Average response time" "95th percentile response time"; do
    block=$(awk -v t="$title" 'index($0, "Table") == 1 { on = index($0, t) > 0 } on' "$TMP/aa.out")
    like "$block" "\| +1 \| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\|" "$title: 1-thread row with median (min-max)"
    like "$block" "\| +2 \|" "$title: 2-thread row"
    like "$block" "\| Average \|" "$title: Average row"
done
# the bottom line: the verdict block ends the output; % improvement is the change's estimate
is "$(verdict_last "$TMP/aa.out")" ok "the verdict block is the last thing printed"
like "$(<"$TMP/aa.out")" "^  B: tps [-+][0-9.]+% \(95% CI [-+][0-9.]+% \.\. [-+][0-9.]+%\) (~|better|worse)(.*)?; significant in [0-2] of 2 cells$" \
    "verdict: B's tps gain with its CI and the cells significant"
like "$(<"$TMP/aa.out")" "^    noise: one run's tps varies by up to [0-9.]+% \(CV\) over 2 rounds" "verdict: the noise"
like "$(improvement_agrees "$TMP/aa.out")" "^[1-9][0-9]* rows agree$" "% improvement and the change column follow the same estimate"
unlike "$(<"$TMP/aa.out")" "^Table [0-9]+\. Load and trust per run" "the per-run trust table: not by default"
like "$(<"$TMP/aa.out")" "^Load and trust per run: [0-9]+ of 8 runs with metrics distrusted" "one line counts the distrusted runs"
n=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print scalar @{$j->{runs}}' <"$TMP/aa.json")
is "$n" 8 "JSON: 2 variants x 2 thread counts x 2 rounds = 8 runs"
ok "workdir removed at the end" test ! -e "$TMP/wd"

# --reset=round and a warm-up run: the header says so, and the report rebuilt from the results
# database is the same header
# (4 rounds and --fail-if-slower=50: an A/A pair never trips it, exit 0 and no verdict)
timeout 120 "$PGOLAB" compare "${vars[@]}" --results="$TMP/reset.db" --bench=oltp_point_select --threads=1 --rounds=4 --time=1 \
    --table-size=500 --reset=round --warmup-runs=1 --fail-if-slower=50 --trust-table >"$TMP/reset.out" 2>"$TMP/reset.err"
is "$?" 0 "A/A --reset=round --warmup-runs=1 --fail-if-slower=50: exit 0 (not tripped)"
like "$(<"$TMP/reset.err")" "^--fail-if-slower=50: no tps cell significantly slower than the baseline A by more than 50%$" \
    "A/A --fail-if-slower=50: says no cell is slower"
is "$(grep -cE '^\| +[0-9]+ \| +[AB] \| oltp_point_select \| +1 \| +[1-4] \|' "$TMP/reset.out")" 8 \
    "--trust-table: the per-run table has each of the 8 runs"
is "$(verdict_last "$TMP/reset.out")" ok "--trust-table: the verdict still ends the output"
like "$(<"$TMP/reset.out")" "^  data: 1 table x 500 rows, a fresh copy per variant and round; " "--reset=round: the data line says so"
like "$(<"$TMP/reset.out")" "^  warm-up: 1 run per variant, workload and thread count before round 1, not counted$" \
    "--warmup-runs=1: the header says so"
"$PGOLAB" report --results="$TMP/reset.db" --experiment=1 >"$TMP/reset-r.out" 2>&1
is "$(grep -E '^  (data|warm-up):' "$TMP/reset-r.out")" "$(grep -E '^  (data|warm-up):' "$TMP/reset.out")" \
    "report from the results database: the same data and warm-up lines"

# Ctrl-C midway: exit 2, the runs already finished are in the JSON, marked incomplete.
timeout 120 "$PGOLAB" compare "${vars[@]}" --results="$TMP/results.db" --bench=oltp_point_select --threads=1 --rounds=20 --time=1 \
    --table-size=1000 --output="$TMP/int.json" >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
# the event, not a fixed sleep: the first run is recorded (experiment 2), within 60 s
recorded() { [ "$(sq "$TMP/results.db" "SELECT count(*) FROM runs WHERE experiment_id = 2" 2>/dev/null)" -ge 1 ] 2>/dev/null; }
ok "interrupted compare: a first run was recorded before the signal" poll 600 0.1 recorded
kill -INT $pid
wait $pid
is "$?" 2 "interrupted compare: exit 2"
read -r complete runs < <(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
    print(($j->{complete} ? "true" : "false"), " ", scalar @{$j->{runs}}, "\n")' <"$TMP/int.json")
is "$complete" false "interrupted compare: JSON says complete=false"
cmp_ok "$runs" '>=' 1 "interrupted compare: finished runs kept in the JSON ($runs)"
cmp_ok "$runs" '<' 40 "interrupted compare: it did stop early"

bad() {
    local desc=$1 re=$2
    shift 2
    "$PGOLAB" compare --time=1 --results="$TMP/results.db" "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
    is "$?" 1 "$desc: exit 1"
    like "$(head -1 "$TMP/bad.err")" "$re" "$desc: message"
    is "$(wc -l <"$TMP/bad.err" | tr -d ' ')" 1 "$desc: one line"
}
bad "one variant" "variant" --variant "A=sqlite:$SYSLIB"
bad "missing library" "/nonexistent/lib.so" --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:/nonexistent/lib.so"
bad "not a shared library" "^FATAL: variant B: --sqlite-library=/etc/passwd: cannot load it as a shared library: /etc/passwd: invalid ELF header$" --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:/etc/passwd"
bad "duplicate name" "A" --variant "A=sqlite:$SYSLIB" --variant "A=sqlite:$TMP/libcopy.so"
bad "server prefix without a server" "variant B: no mysql server binary under /etc" --variant "A=sqlite:$SYSLIB" --variant "B=mysql:/etc"
bad "rounds=0" "rounds" "${vars[@]}" --rounds=0
bad "a thread count twice" "^FATAL: invalid value for --threads: '1,1' names '1' twice" "${vars[@]}" --threads=1,1
bad "an empty thread count" "^FATAL: invalid value for --threads: '1,,2' has an empty item" "${vars[@]}" --threads=1,,2
bad "a workload twice" "^FATAL: invalid value for --bench: 'oltp_point_select,oltp_point_select' names 'oltp_point_select' twice" \
    "${vars[@]}" --bench=oltp_point_select,oltp_point_select
experiments=$(sq "$TMP/results.db" "SELECT count(*) FROM experiments")
bad "--profile-frequency=0" "^FATAL: --profile-frequency=0: expected 1..100000" "${vars[@]}" --profile --profile-frequency=0
is "$(sq "$TMP/results.db" "SELECT count(*) FROM experiments")" "$experiments" "--profile-frequency=0: no experiment recorded"
done_testing
